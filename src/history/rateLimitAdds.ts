/**
 * Several rate-limit checks answered by one upsert: the adds of one batch
 * are merged per key (one row each: PostgreSQL's upsert may not touch a row
 * twice in one statement), and each add's answer is then what it would
 * have read had the adds run one after another in the order given. Pure:
 * store/rateLimitCounters.ts runs the statement.
 */

/** One check: `points` more for `key`; `expire` is when a window starting now would end (null: never). */
export interface RateLimitAdd {
  key: string;
  points: number;
  expire: Date | null;
}

/** A counter after an add: points used in the window, and when the window ends (null: never). */
export interface RateLimitCounter {
  points: number;
  expire: Date | null;
}

/**
 * The adds merged per key, in key order (so concurrent batches of several
 * processes lock the rows they share in one order, and never deadlock):
 * each key's points summed, and the end of a window its first add would
 * start, as that add would have started it.
 */
export function mergeRateLimitAdds(adds: readonly RateLimitAdd[]): RateLimitAdd[] {
  const merged = new Map<string, RateLimitAdd>();
  for (const add of adds) {
    const seen = merged.get(add.key);
    merged.set(add.key, seen === undefined ? { ...add } : { ...seen, points: seen.points + add.points });
  }
  return [...merged.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Each add's answer, from the counters after the merged upsert (`after`, by
 * key): the counter less the points of the same key's later adds, as if
 * each had been its own upsert in turn. Within a window that is exact; a
 * window that ended is restarted by the key's first add, and the points
 * after it count from there, as they would one by one. That needs what
 * the limiter guarantees: a key is one limiter's, so its adds all have an
 * end or none, and a window an add would start ends after the statement's
 * now (it starts when the add is asked and lasts longer than the wait).
 */
export function answerEachAdd(adds: readonly RateLimitAdd[], after: ReadonlyMap<string, RateLimitCounter>): RateLimitCounter[] {
  const later = new Map<string, number>();
  const answers: RateLimitCounter[] = new Array(adds.length);
  for (let i = adds.length - 1; i >= 0; i--) {
    const { key, points } = adds[i]!;
    const counter = after.get(key);
    if (counter === undefined) throw new Error(`The rate-limit upsert answered no counter for key ${JSON.stringify(key)}.`);
    const pointsAfterMe = later.get(key) ?? 0;
    answers[i] = { points: counter.points - pointsAfterMe, expire: counter.expire };
    later.set(key, pointsAfterMe + points);
  }
  return answers;
}
