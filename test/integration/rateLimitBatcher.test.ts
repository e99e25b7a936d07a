/**
 * A process's rate-limit checks answered together (store/rateLimitBatcher.ts
 * and the many-key upsert in store/rateLimitCounters.ts), on both
 * databases: checks that overlap share a statement, yet each reads its own
 * count, as one upsert per check would have answered it, so a limit lets
 * exactly its burst through however the checks are grouped.
 */
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { rowsOf } from '../../src/db/rows.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { createRateLimitBatcher, MAX_TOGETHER } from '../../src/store/rateLimitBatcher.ts';
import { addRateLimitCounters, upsertRateLimitCounter } from '../../src/store/rateLimitCounters.ts';
import { createRateLimiter } from '../../src/graphql/gate/rateLimiter.ts';
import { backends, openTestDatabase, postgresOnly } from '../helpers/database.ts';

describe.each(backends)('Rate-limit checks answered together (%s)', (backend) => {
  let database: DatabaseHandle;
  let db: SqlRunner;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    db = createRunner(database.client);
  });
  afterAll(() => database.close());

  const stored = async (prefix: string) =>
    rowsOf<{ key: string; points: number }>(await database.db.execute(sql`select key, points from rate_limits where key like ${`${prefix}%`} order by key`));

  it('answers each check of one statement as one upsert per check in turn would, keys repeated or not', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), points: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
        async (checks, alreadyCounting) => {
          round++;
          const end = new Date(Date.now() + 60_000);
          // The same counters twice, under two prefixes: one checked one by one, one all at once.
          for (const prefix of [`seq${round}:`, `all${round}:`]) {
            for (const key of new Set(alreadyCounting)) await upsertRateLimitCounter(db, prefix + key, 7, end, false);
          }
          const oneByOne = [];
          for (const check of checks) oneByOne.push(await upsertRateLimitCounter(db, `seq${round}:${check.key}`, check.points, end, false));
          const together = await addRateLimitCounters(
            db,
            checks.map((check) => ({ key: `all${round}:${check.key}`, points: check.points, expire: end })),
          );
          expect(together).toEqual(oneByOne);
          expect((await stored(`all${round}:`)).map((r) => [r.key.split(':')[1], r.points])).toEqual(
            (await stored(`seq${round}:`)).map((r) => [r.key.split(':')[1], r.points]),
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it('sends overlapping checks together, each reading its own count in the order they came', async () => {
    const statements: number[] = [];
    const batcher = createRateLimitBatcher(db, (checks) => statements.push(checks));
    const end = new Date(Date.now() + 60_000);
    const keys = ['send:ann', 'send:bob', 'mutation:ann', 'connect:cy'];
    const checks = Array.from({ length: 120 }, (_, i) => ({ key: `together:${keys[i % keys.length]!}`, points: 1, expire: end }));
    const answers = await Promise.all(checks.map((check) => batcher.add(check)));
    // The first alone at once, the rest behind it, at most MAX_TOGETHER a statement.
    expect(statements[0]).toBe(1);
    expect(statements.length).toBe(1 + Math.ceil(119 / MAX_TOGETHER));
    expect(Math.max(...statements)).toBe(MAX_TOGETHER);
    for (const key of keys) {
      // Each key's 30 checks read 1 to 30, in the order they were asked: no two the same count.
      expect(answers.filter((_, i) => checks[i]!.key.endsWith(key)).map((a) => a.points)).toEqual(Array.from({ length: 30 }, (_, k) => k + 1));
    }
    expect(answers.every((a) => a.expire?.getTime() === end.getTime())).toBe(true);
    expect(await stored('together:')).toEqual(keys.map((key) => ({ key: `together:${key}`, points: 30 })).sort((a, b) => (a.key < b.key ? -1 : 1)));
  });

  it('fails every check of a statement that fails, and answers the next ones again', async () => {
    let broken = true;
    const failing: SqlRunner = {
      ...db,
      rows: (query) => (broken ? Promise.reject(new Error('connection lost')) : db.rows(query)),
    };
    const batcher = createRateLimitBatcher(failing);
    const end = new Date(Date.now() + 60_000);
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => batcher.add({ key: 'broken:ann', points: 1, expire: end })));
    expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'answered'))).toEqual(Array(5).fill('Error: connection lost'));
    broken = false;
    expect(await Promise.all([batcher.add({ key: 'broken:ann', points: 1, expire: end }), batcher.add({ key: 'broken:ann', points: 2, expire: end })])).toEqual([
      { points: 1, expire: end },
      { points: 3, expire: end },
    ]);
  });

  postgresOnly(backend)('lets exactly a burst of concurrent sends through the limiter, counted in PostgreSQL', async () => {
    const limiter = createRateLimiter(
      { send: { perSecond: 1, burst: 10 }, otherMutations: { perSecond: 1, burst: 10 }, subscribe: { perSecond: 1, burst: 10 }, connect: { perSecond: 1, burst: 10 } },
      { kind: 'postgres', db: database.db, runner: db },
    );
    const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.take('burst-user', 'sendMessage', 1)));
    expect(decisions.filter((d) => d.allowed).length).toBe(10);
    // The library's key: its prefix, then the user. Every check counted, the refused ones too (as the library does).
    expect(await stored('send:burst-user')).toEqual([{ key: 'send:burst-user', points: 25 }]);
  });
});
