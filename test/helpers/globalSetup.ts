/**
 * Runs once before all test files: makes one migrated PGlite data directory
 * and saves it, so each file's in-memory database starts from it in about a
 * second instead of running initdb for four.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';

export default async function setup(project: TestProject): Promise<() => void> {
  const handle = await openDatabase({ kind: 'pglite-memory' });
  await applyMigrations(handle);
  const client = (handle.db as unknown as { $client: PGlite }).$client;
  const snapshot = await client.dumpDataDir('none');
  await handle.close();
  const folder = mkdtempSync(join(tmpdir(), 'backscroll-test-'));
  const file = join(folder, 'pglite-migrated.tar');
  writeFileSync(file, Buffer.from(await snapshot.arrayBuffer()));
  project.provide('pgliteSnapshot', file);
  return () => rmSync(folder, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteSnapshot: string;
  }
}
