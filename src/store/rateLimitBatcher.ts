/**
 * The rate-limit checks of one process, answered together when they
 * overlap: while one upsert of the shared counters is on its way, the
 * checks that arrive wait, and then go as one statement
 * (`addRateLimitCounters`), up to MAX_TOGETHER at a time.
 *
 * Why: every mutation is checked before it runs, so the check was a round
 * trip and a statement of its own per send; under load that was about a
 * fifth of the server's and of PostgreSQL's CPU per send over 1,000
 * conversations (0.3-0.4 ms each, measured with the counters in memory
 * instead). A check alone goes at once, exactly as before; only checks
 * that would have queued for a connection anyway wait, and not longer.
 *
 * Each check answers what it would have read alone, in the order the
 * checks arrived (history/rateLimitAdds.ts), so limits stay exact across
 * processes. If the statement fails, every check in it fails with its
 * error, and the limiter answers each from its in-memory insurance, as it
 * does for a check of its own that fails.
 */
import type { SqlRunner } from '../db/runner.ts';
import type { RateLimitAdd, RateLimitCounter } from '../history/rateLimitAdds.ts';
import { addRateLimitCounters } from './rateLimitCounters.ts';

/** The most checks one statement answers: keeps its arrays, and its locks, small. */
export const MAX_TOGETHER = 64;

interface Waiting {
  add: RateLimitAdd;
  resolve(counter: RateLimitCounter): void;
  reject(error: unknown): void;
}

/** A process's rate-limit checks, answered together when they overlap. */
export interface RateLimitBatcher {
  /** Adds `add.points` to `add.key`'s counter; answers the counter as this add left it. */
  add(add: RateLimitAdd): Promise<RateLimitCounter>;
}

/** Batches checks on `db`; `observe` is told how many checks each statement answered (tests). */
export function createRateLimitBatcher(db: SqlRunner, observe: (checks: number) => void = () => undefined): RateLimitBatcher {
  /** The checks waiting for the statement on its way; null when none is. */
  let waiting: Waiting[] | null = null;

  const run = async (adds: RateLimitAdd[]): Promise<RateLimitCounter[]> => {
    const counters = await addRateLimitCounters(db, adds);
    observe(adds.length);
    return counters;
  };

  /** Answers what waits, batch after batch, until nothing does. Never throws. */
  const drain = async (queue: Waiting[]): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_TOGETHER);
      try {
        const counters = await run(batch.map((w) => w.add));
        batch.forEach((w, i) => w.resolve(counters[i]!));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    waiting = null;
  };

  return {
    async add(add) {
      const queue = waiting;
      if (queue !== null) return new Promise<RateLimitCounter>((resolve, reject) => queue.push({ add, resolve, reject }));
      const mine: Waiting[] = [];
      waiting = mine;
      try {
        return (await run([add]))[0]!;
      } finally {
        void drain(mine);
      }
    },
  };
}
