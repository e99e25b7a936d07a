import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { DatabaseTimeoutError, DatabaseUnavailableError } from '../../src/db/errors.ts';
import { createRunner } from '../../src/db/runner.ts';
import { backends, createScratchDatabase } from '../helpers/database.ts';

// Timeouts and connection failures are PostgreSQL server behaviour; PGlite runs in-process.
const describeOnPostgres = backends.includes('postgres') ? describe : () => undefined;

describeOnPostgres('Database failures on PostgreSQL', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    handle = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 1, statementTimeoutMs: 200 });
  });
  afterAll(async () => {
    await handle.close();
    await scratch.drop();
  });

  it('cancels a statement past the statement timeout with DatabaseTimeoutError, and the connection serves again', async () => {
    const runner = createRunner(handle.client);
    await expect(runner.rows(sql`select pg_sleep(2)`)).rejects.toBeInstanceOf(DatabaseTimeoutError);
    // The pool has one connection: this would hang if the timeout had not freed it.
    expect(await runner.rows(sql`select 1 as one`)).toEqual([{ one: 1 }]);
  });

  it('fails fast with DatabaseUnavailableError when nothing listens at the address', async () => {
    const url = new URL(scratch.url);
    url.port = '1';
    const unreachable = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
    try {
      await expect(createRunner(unreachable.client).rows(sql`select 1`)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      await unreachable.close();
    }
  });
});
