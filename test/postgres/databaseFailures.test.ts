import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { DatabaseTimeoutError, DatabaseUnavailableError } from '../../src/db/errors.ts';
import { createRunner } from '../../src/db/runner.ts';
import { signToken } from '../../src/auth/tokens.ts';
import { readConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startServer } from '../../src/server.ts';
import { createScratchDatabase } from '../helpers/database.ts';

const SECRET = 'database-failure-secret-that-is-at-least-32-chars';


describe('Database failures on PostgreSQL', () => {
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

  it('answers a GraphQL request SERVICE_UNAVAILABLE (not an internal error) when the database cannot be reached', async () => {
    const url = new URL(scratch.url);
    url.port = '1';
    const unreachable = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
    const result = readConfig({ JWT_SECRET: SECRET, NODE_ENV: 'production' });
    if (!result.ok) throw new Error(result.problems.join(' '));
    const server = await startServer({ config: result.config, client: unreachable.client, jwtSecret: SECRET, logger: createLogger('silent') }, 0);
    try {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await signToken(SECRET, 'alice', 60)}` },
        body: JSON.stringify({ query: 'mutation { createConversation(input: { memberIds: [] }) { conversation { id } } }' }),
      });
      const body = (await response.json()) as { errors?: { extensions?: unknown }[] };
      expect(body.errors?.map((e) => e.extensions)).toEqual([{ code: 'SERVICE_UNAVAILABLE' }]);
    } finally {
      await server.stop();
      await unreachable.close();
    }
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
