/**
 * Several rate-limit checks as one upsert (history/rateLimitAdds.ts): merged
 * per key and answered per check, every check must read what it would have
 * read had each been its own upsert, one after another, and the counters
 * must end the same. The upsert's rule is modelled here as the statement
 * has it (add within a window, restart a window that ended), one check at
 * a time against the merged checks at once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerEachAdd, mergeRateLimitAdds, type RateLimitAdd, type RateLimitCounter } from '../../src/history/rateLimitAdds.ts';

const NOW = 1_000_000;

/** The statement's rule for one add to `counters` at NOW; answers the counter after it. */
function upsert(counters: Map<string, RateLimitCounter>, add: RateLimitAdd): RateLimitCounter {
  const row = counters.get(add.key);
  const next =
    row === undefined || (row.expire !== null && row.expire.getTime() <= NOW)
      ? { points: add.points, expire: add.expire }
      : { points: row.points + add.points, expire: row.expire };
  counters.set(add.key, next);
  return next;
}

const KEYS = ['send:a', 'send:b', 'mutation:c', 'connect:a'] as const;
const key = fc.constantFrom(...KEYS);
/** A stored counter's end: any time, ended or not, or none. */
const storedEnd = fc.option(fc.integer({ min: NOW - 5_000, max: NOW + 5_000 }).map((ms) => new Date(ms)), { nil: null });
const start = fc.array(fc.record({ key, points: fc.integer({ min: 0, max: 50 }), expire: storedEnd }), { maxLength: 4 });
/**
 * The checks: each key is one limiter's, whose windows last its duration
 * (none: never end), so a check's window would end that long after the
 * moment it was asked, which is no earlier than the statement's now.
 */
const adds = fc
  .record({
    durations: fc.tuple(...KEYS.map(() => fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: null }))),
    checks: fc.array(fc.record({ key: fc.integer({ min: 0, max: KEYS.length - 1 }), points: fc.integer({ min: 1, max: 5 }), askedAt: fc.integer({ min: 0, max: 100 }) }), {
      minLength: 1,
      maxLength: 30,
    }),
  })
  .map(({ durations, checks }) =>
    checks.map(({ key: k, points, askedAt }): RateLimitAdd => {
      const duration = durations[k]!;
      return { key: KEYS[k]!, points, expire: duration === null ? null : new Date(NOW + askedAt + duration) };
    }),
  );

describe('Rate-limit checks answered by one upsert', () => {
  it('answers each check, and leaves each counter, as one upsert per check in turn would', () => {
    fc.assert(
      fc.property(start, adds, (rows, checks) => {
        const oneByOne = new Map(rows.map((r) => [r.key, { points: r.points, expire: r.expire }]));
        const together = new Map(oneByOne);
        const expected = checks.map((add) => upsert(oneByOne, add));
        const merged = mergeRateLimitAdds(checks);
        for (const add of merged) upsert(together, add);
        expect(answerEachAdd(checks, together)).toEqual(expected);
        expect(together).toEqual(oneByOne);
      }),
    );
  });

  it('merges to one add per key, in key order, with the window end of the key’s first check', () => {
    const first = new Date(NOW + 1000);
    const merged = mergeRateLimitAdds([
      { key: 'send:b', points: 1, expire: first },
      { key: 'send:a', points: 2, expire: null },
      { key: 'send:b', points: 3, expire: new Date(NOW + 2000) },
    ]);
    expect(merged).toEqual([
      { key: 'send:a', points: 2, expire: null },
      { key: 'send:b', points: 4, expire: first },
    ]);
  });

  it('refuses to answer a check whose key the upsert did not answer', () => {
    expect(() => answerEachAdd([{ key: 'send:a', points: 1, expire: null }], new Map())).toThrow(/no counter for key "send:a"/);
  });
});
