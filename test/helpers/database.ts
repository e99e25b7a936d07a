/**
 * A fresh, migrated database for one test file: in-memory PGlite, or a new
 * database on the PostgreSQL at DATABASE_URL (dropped again on close), so test
 * files running in parallel never share rows.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, inject, it } from 'vitest';
import postgres from 'postgres';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { logWrites, partitionTables } from './partitionedLayout.ts';
import { partitionedRun, routeRecorded, statementRecorder, writeRoutingReport } from './routing.ts';

export type Backend = 'pglite' | 'postgres';

/**
 * The backends this run covers: PGlite always, PostgreSQL when DATABASE_URL
 * is set; PostgreSQL alone in the partitioned run (routing.ts).
 */
export const backends: Backend[] = partitionedRun ? ['postgres'] : process.env.DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/**
 * `it` for the PostgreSQL run of a `describe.each(backends)` file, and
 * nothing at all on PGlite: for behaviour only a server shows (several
 * connections, a dropped LISTEN). Not registered, rather than skipped.
 */
export function postgresOnly(backend: Backend): typeof it {
  return ((...args: Parameters<typeof it>) => (backend === 'postgres' ? it(...args) : undefined)) as typeof it;
}

/** The URL of a database named `name` on the DATABASE_URL server. */
function databaseUrl(name: string): string {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates an empty database on the DATABASE_URL server; returns its name and a dropper. */
export async function createScratchDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `backscroll_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      const dropper = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  };
}

/** Opens a fresh migrated database on `backend`; `close` removes it. */
export async function openTestDatabase(backend: Backend): Promise<DatabaseHandle> {
  if (backend === 'pglite') {
    // Made and migrated once per run by globalSetup.ts; migrating again is a no-op check.
    const snapshot = new Blob([readFileSync(inject('pgliteSnapshot'))]);
    const handle = await openDatabase({ kind: 'pglite-memory', snapshot });
    await applyMigrations(handle);
    return handle;
  }
  const scratch = await createScratchDatabase();
  // A read pool as a server has (DATABASE_READ_POOL_SIZE's default), which the harness's query operations go through.
  const handle = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 10, readPoolSize: 2 });
  await applyMigrations(handle);
  if (partitionedRun) return partitioned(handle, scratch);
  return {
    ...handle,
    close: async () => {
      await handle.close();
      await scratch.drop();
    },
  };
}

/**
 * `handle` with its conversation-scoped tables partitioned and every
 * statement sent through its client recorded; closing it explains them all
 * into the routing report before the database is dropped (routing.ts).
 */
async function partitioned(handle: DatabaseHandle, scratch: Awaited<ReturnType<typeof createScratchDatabase>>): Promise<DatabaseHandle> {
  const admin = postgres(scratch.url, { max: 1, onnotice: () => {} });
  try {
    await partitionTables(admin);
    await logWrites(admin);
  } finally {
    await admin.end();
  }
  const recorder = statementRecorder();
  const testFile = expect.getState().testPath ?? 'unknown file';
  return {
    ...handle,
    client: { ...handle.client, recordStatement: recorder.record },
    reads: handle.reads && { ...handle.reads, recordStatement: recorder.record },
    close: async () => {
      await handle.close();
      try {
        writeRoutingReport(scratch.name, await routeRecorded(scratch.url, recorder.recorded.values(), testFile));
      } finally {
        await scratch.drop();
      }
    },
  };
}
