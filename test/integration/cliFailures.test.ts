/**
 * A `backscroll` command whose statement fails prints PostgreSQL's code and
 * message on one line, not drizzle's statement with its parameters, nor a
 * stack. `migrate` stands for every command: they all end in the same
 * handler (src/cli.ts). The failure is real: the database already has a
 * table the first migration creates.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config.ts';
import { backends, createScratchDatabase } from '../helpers/database.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFLICT = 'create table conversations (unrelated int)';
const EXPECTED = 'backscroll: migrate failed: 42P07 relation "conversations" already exists\n';

/** Runs `backscroll ...args` with only `settings` of ours set; answers its exit code and output. */
function runCli(args: string[], settings: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  for (const { name } of SETTINGS) delete env[name];
  const child = spawn(process.execPath, ['bin/backscroll.js', ...args], { cwd: ROOT, env: { ...env, ...settings }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe.each(backends)('A failing statement in a backscroll command (%s)', (backend) => {
  it('prints `<command> failed: <SQLSTATE> <message>` and exits 1', { timeout: 60_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'backscroll-cli-failure-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const settings: Record<string, string> = { BACKSCROLL_DATA_DIR: dataDir };
    if (backend === 'pglite') {
      const pglite = new PGlite(join(dataDir, 'pglite'));
      await pglite.exec(CONFLICT);
      await pglite.close();
    } else {
      const scratch = await createScratchDatabase();
      cleanups.push(() => scratch.drop());
      const client = postgres(scratch.url, { max: 1, onnotice: () => {} });
      await client.unsafe(CONFLICT);
      await client.end();
      settings.DATABASE_URL = scratch.url;
    }
    const result = await runCli(['migrate'], settings);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: EXPECTED });
  });
});
