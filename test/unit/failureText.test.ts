/**
 * What a failing command prints, from real errors: statements that fail on
 * PGlite, sent through drizzle (which wraps the driver's error with the
 * statement and its parameters), through our runner, and a refused
 * connection through postgres.js.
 */
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseTimeoutError } from '../../src/db/errors.ts';
import { failureText } from '../../src/db/failureText.ts';

/** What `work` rejected with. */
async function rejection(work: () => Promise<unknown>): Promise<Error & { code: string; detail?: string; cause?: unknown }> {
  try {
    await work();
  } catch (error) {
    return error as Error & { code: string; cause?: unknown };
  }
  throw new Error('expected the work to fail, but it succeeded');
}

describe('Failure text: what a command prints for an error', () => {
  let pglite: PGlite;
  let db: ReturnType<typeof drizzlePglite>;
  const uuids = Array.from({ length: 100 }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);

  beforeAll(async () => {
    pglite = new PGlite();
    db = drizzlePglite(pglite);
    await db.execute(sql`create table t (id uuid primary key)`);
    await db.execute(sql`insert into t values (${uuids[0]}::uuid)`);
  });
  afterAll(() => pglite.close());

  it('prints a statement that drizzle wrapped as its SQLSTATE code and message, with the detail, and no parameters or stack', async () => {
    const error = await rejection(() => db.execute(sql`insert into t select * from unnest(${sql.param(uuids)}::uuid[])`));
    // drizzle's own message: the statement, then every parameter.
    expect(error.message).toMatch(/^Failed query: insert into t[\s\S]*params: 00000000-0000-4000-8000-000000000000,/);
    const cause = error.cause as { code: string; message: string; detail: string };
    expect(cause.code).toBe('23505');
    expect(failureText(error)).toBe(`23505 ${cause.message}\n  detail: ${cause.detail}`);
  });

  it('prints a statement that failed through the driver alone the same way', async () => {
    const error = await rejection(() => pglite.query('select 1 / 0'));
    expect(error.code).toBe('22012');
    expect(failureText(error)).toBe(`22012 ${error.message}`);
  });

  it('prints a hint on a line of its own', async () => {
    const error = await rejection(() => db.execute(sql`select no_such_function(1)`));
    const cause = error.cause as { code: string; message: string; hint: string };
    expect(cause.hint).toBeTruthy();
    expect(failureText(error)).toBe(`${cause.code} ${cause.message}\n  hint: ${cause.hint}`);
  });

  it('prints a wrapper that repeats its cause (a statement timeout from the runner) once, with the code', async () => {
    const driverError = await rejection(() => pglite.query('select 1 / 0'));
    const timeout = new DatabaseTimeoutError(driverError.message, { cause: driverError });
    expect(failureText(timeout)).toBe(`22012 ${driverError.message}`);
  });

  it('prints a wrapper with its own message, then the statement as its cause', async () => {
    const error = await rejection(() => db.execute(sql`select 1 / 0`));
    const batch = new Error('seeding batch 3 of 80', { cause: error });
    expect(failureText(batch)).toBe(`seeding batch 3 of 80\ncause: 22012 ${(error.cause as Error).message}`);
  });

  it('prints a refused connection by its code', async () => {
    const client = postgres('postgres://nobody@127.0.0.1:1/nothing', { max: 1, connect_timeout: 5, onnotice: () => {} });
    try {
      const error = await rejection(() => drizzlePostgres(client).execute(sql`select 1`));
      expect(failureText(error)).toMatch(/^ECONNREFUSED \S.*127\.0\.0\.1:1$/);
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('prints the messages of an AggregateError that has none of its own (a host name with several addresses)', () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const error = Object.assign(new AggregateError([refused('::1:1'), refused('127.0.0.1:1')], ''), { code: 'ECONNREFUSED' });
    expect(failureText(error)).toBe('ECONNREFUSED connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1');
  });

  it('keeps the name and stack of an error with no code anywhere: a bug, not a failed statement', () => {
    const bug = new TypeError('handle.db is undefined');
    const lines = failureText(bug).split('\n');
    expect(lines[0]).toBe('TypeError: handle.db is undefined');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(1).every((line) => /^\s+at /.test(line))).toBe(true);
  });

  it('prints what was thrown when it is not an error', () => {
    expect(failureText('plain words')).toBe('plain words');
  });
});
