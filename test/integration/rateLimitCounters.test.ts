/**
 * The shared rate-limit counters' prepared upsert (store/rateLimitCounters.ts)
 * does what rate-limiter-flexible's own Drizzle upsert does: add within a
 * window, start a new window once it ended, set outright when forced. A
 * broken statement would not fail a request (the library's in-memory
 * insurance limiter takes over), so each process would count alone: this
 * checks the statement itself, on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { upsertRateLimitCounter } from '../../src/store/rateLimitCounters.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';

describe.each(backends)('Rate-limit counters (%s)', (backend) => {
  let database: DatabaseHandle;
  let db: SqlRunner;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    db = createRunner(database.client);
  });
  afterAll(() => database.close());

  it('adds points within a window and keeps its end', async () => {
    const end = new Date(Date.now() + 60_000);
    expect(await upsertRateLimitCounter(db, 'send:alice', 1, end, false)).toEqual({ points: 1, expire: end });
    const later = new Date(end.getTime() + 5_000);
    expect(await upsertRateLimitCounter(db, 'send:alice', 3, later, false)).toEqual({ points: 4, expire: end });
    // Another key counts apart.
    expect(await upsertRateLimitCounter(db, 'send:bob', 2, later, false)).toEqual({ points: 2, expire: later });
  });

  it('starts a new window, with only the new points, once the old one has ended', async () => {
    const ended = new Date(Date.now() - 1_000);
    await upsertRateLimitCounter(db, 'send:carol', 9, ended, false);
    const next = new Date(Date.now() + 60_000);
    expect(await upsertRateLimitCounter(db, 'send:carol', 1, next, false)).toEqual({ points: 1, expire: next });
  });

  it('sets the counter outright when forced, a window without end included', async () => {
    const end = new Date(Date.now() + 60_000);
    await upsertRateLimitCounter(db, 'send:dave', 7, end, false);
    expect(await upsertRateLimitCounter(db, 'send:dave', 2, null, true)).toEqual({ points: 2, expire: null });
    expect(await upsertRateLimitCounter(db, 'send:dave', 1, end, false)).toEqual({ points: 3, expire: null });
  });
});
