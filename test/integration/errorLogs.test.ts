/**
 * Errors reach the log without the values of the request that caused them:
 * a database error carries its SQL, every bound value and a `detail` with
 * the failing row, and its message may quote the value it refused. Each
 * case makes a real statement fail with a secret bound, on PGlite and on
 * PostgreSQL, and reads what the server's own logger (createLogger) wrote.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseTimeoutError } from '../../src/db/errors.ts';
import type { SqlClient } from '../../src/db/runner.ts';
import { createLogger } from '../../src/log.ts';
import { backends } from '../helpers/database.ts';
import { codes, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, SEND } from '../helpers/operations.ts';

/** A value no log line may contain. */
const secret = () => `secret-${randomBytes(6).toString('hex')}`;

/** The error `statement` fails with, with `params` bound, through the driver itself. */
async function driverError(client: SqlClient, statement: string, params: unknown[]): Promise<unknown> {
  try {
    if (client.kind === 'pglite') await client.pglite.query(statement, params);
    else await client.sql.unsafe(statement, params as never[], { prepare: true });
  } catch (error) {
    return error;
  }
  throw new Error(`${statement} did not fail`);
}

describe.each(backends)('Logged errors carry no bound values, SQL or details (%s)', (backend) => {
  let harness: Harness;
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });

  /** What the logger wrote for `error`, and which of `secrets` appear anywhere in it. */
  const logged = (error: unknown, secrets: string[]) => {
    lines.length = 0;
    logger.error({ err: error }, 'probe');
    const text = lines.join('');
    const { err } = JSON.parse(text) as { err: Record<string, unknown> };
    return { err, leaks: secrets.filter((s) => text.includes(s)) };
  };

  beforeAll(async () => {
    harness = await startHarness(backend, {}, { logger });
    await harness.database.db.execute(sql`create table log_probe (id text primary key, n int)`);
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('logs a refused value (22P02, whose message quotes it) with its code and routine, but not the value, the SQL or where it was bound', async () => {
    const value = secret();
    const error = await driverError(harness.database.client, 'select $1::int as refused_probe', [value]);
    const { err, leaks } = logged(error, [value, 'refused_probe']);
    expect({ code: err.code, routine: typeof err.routine, message: err.message, leaks }).toEqual({
      code: '22P02',
      routine: 'string',
      message: 'invalid input syntax for type integer: "[bound value]"',
      leaks: [],
    });
  });

  it('redacts a quoted value even when it is a single character', async () => {
    const error = await driverError(harness.database.client, 'select $1::int', ['q']);
    expect(logged(error, []).err.message).toBe('invalid input syntax for type integer: "[bound value]"');
  });

  it('logs a unique violation with its code, table and constraint, but not the key in its detail', async () => {
    const key = secret();
    await harness.database.db.execute(sql`insert into log_probe (id) values (${key})`);
    const error = await driverError(harness.database.client, 'insert into log_probe (id, n) values ($1, $2)', [key, 7]);
    const { err, leaks } = logged(error, [key, 'already exists', 'insert into']);
    expect({ code: err.code, table: err.table, constraint: err.constraint, detail: err.detail, leaks }).toEqual({
      code: '23505',
      table: 'log_probe',
      constraint: 'log_probe_pkey',
      detail: undefined,
      leaks: [],
    });
  });

  it('logs a wrapped database error and its cause without the values of either', async () => {
    const value = secret();
    const cause = await driverError(harness.database.client, 'select $1::int', [value]);
    const wrapped = new DatabaseTimeoutError((cause as Error).message, { cause });
    const { err, leaks } = logged(wrapped, [value]);
    expect({ type: err.type, causeCode: (err.cause as { code?: unknown }).code, leaks }).toEqual({
      type: 'DatabaseTimeoutError',
      causeCode: '22P02',
      leaks: [],
    });
  });

  it('logs a send the database refuses through the API with its code, and without the text, the row or the SQL', async () => {
    // A constraint the server does not expect: its failure is an internal error, logged with the raw driver error.
    await harness.database.db.execute(sql`alter table message_bodies add constraint no_forbidden_words check (text not like '%forbidden%')`);
    const alice = await harness.client('alice');
    const group = await createGroup(alice, ['bob']);
    const text = `forbidden ${secret()}`;
    lines.length = 0;
    const response = await alice.gql(SEND, { conversationId: group.id, clientMsgId: 'refused', text });
    const entries = lines.map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> });
    const failure = entries.find((entry) => entry.msg === 'unexpected error in a GraphQL request');
    expect({
      codes: codes(response),
      logged: { code: failure?.err?.code, table: failure?.err?.table, constraint: failure?.err?.constraint },
      leaks: [text.split(' ')[1]!, 'Failing row', 'insert into', 'message_bodies (conv_id'].filter((s) => lines.join('').includes(s)),
    }).toEqual({
      codes: ['INTERNAL_SERVER_ERROR'],
      logged: { code: '23514', table: 'message_bodies', constraint: 'no_forbidden_words' },
      leaks: [],
    });
  });
});
