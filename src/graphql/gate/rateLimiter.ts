/**
 * Per-user rate limits, counted where every server process sees the same
 * numbers: in PostgreSQL (rate-limiter-flexible's Drizzle store, with our
 * prepared upsert, one per check or one for the checks that arrive
 * together: see store/rateLimitCounters.ts and store/rateLimitBatcher.ts)
 * when the server runs on it, in this process's memory on PGlite,
 * which only ever serves one process. Each limit allows `burst` actions in a
 * fixed window of `burst / perSecond` seconds: `perSecond` on average, at most
 * `burst` at once. If PostgreSQL cannot answer, the same limit is kept in
 * memory meanwhile (the library's insurance limiter) rather than failing or
 * letting everything through.
 */
import { type RateLimiterAbstract, RateLimiterDrizzle, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit, RateLimitSettings } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import type { SqlRunner } from '../../db/runner.ts';
import { rateLimits } from '../../db/schema.ts';
import { createRateLimitBatcher, type RateLimitBatcher } from '../../store/rateLimitBatcher.ts';
import { type RateLimitCounter, upsertRateLimitCounter } from '../../store/rateLimitCounters.ts';

type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Takes `points` from `userId`'s budget for `action` (a mutation's field name, `subscribe` or `connect`). */
export interface RateLimiter {
  take(userId: string, action: string, points: number): Promise<RateDecision>;
}

/**
 * Where the counters live: PostgreSQL, or memory (PGlite, tests). On
 * PostgreSQL, `runner` sends the checks (prepared) and `db` serves the
 * library's other statements: reads, deletes and the hourly sweep of
 * expired counters, none of them on a request's path.
 */
export type RateLimitStore = { kind: 'postgres'; db: Database; runner: SqlRunner } | { kind: 'memory' };

/**
 * The library's Drizzle store, with its one per-request statement, the
 * upsert, sent through `runner` as a prepared statement: adds through
 * `batcher` (shared by the process's limiters), outright sets alone.
 */
class PreparedRateLimiterDrizzle extends RateLimiterDrizzle {
  readonly #runner: SqlRunner;
  readonly #batcher: RateLimitBatcher;

  constructor(options: ConstructorParameters<typeof RateLimiterDrizzle>[0], runner: SqlRunner, batcher: RateLimitBatcher) {
    super(options);
    this.#runner = runner;
    this.#batcher = batcher;
  }

  /** What the library's `_upsert` answers: the counter after adding `points` (or setting them, with `forceExpire`). */
  _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<RateLimitCounter> {
    const expire = msDuration > 0 ? new Date(Date.now() + msDuration) : null;
    return forceExpire ? upsertRateLimitCounter(this.#runner, key, points, expire, true) : this.#batcher.add({ key, points, expire });
  }
}

/** Makes the limiter for `settings` over `store`. */
export function createRateLimiter(settings: RateLimitSettings, store: RateLimitStore): RateLimiter {
  // One batcher for all four limiters: a process's checks of any kind go together.
  const shared = store.kind === 'postgres' ? { ...store, batcher: createRateLimitBatcher(store.runner) } : null;
  const make = (name: string, limit: RateLimit): RateLimiterAbstract => {
    const options = { keyPrefix: name, points: limit.burst, duration: limit.burst / limit.perSecond };
    const memory = new RateLimiterMemory(options);
    if (shared === null) return memory;
    return new PreparedRateLimiterDrizzle({ ...options, storeClient: shared.db, schema: rateLimits, insuranceLimiter: memory }, shared.runner, shared.batcher);
  };
  const limiters = {
    send: make('send', settings.send),
    otherMutations: make('mutation', settings.otherMutations),
    subscribe: make('subscribe', settings.subscribe),
    connect: make('connect', settings.connect),
  };
  const limiterOf = (action: string) =>
    action === 'sendMessage' ? limiters.send : action === 'subscribe' ? limiters.subscribe : action === 'connect' ? limiters.connect : limiters.otherMutations;
  return {
    async take(userId, action, points) {
      // Mutations other than sends each have their own bucket, as before.
      const key = limiterOf(action) === limiters.otherMutations ? `${action}:${userId}` : userId;
      try {
        await limiterOf(action).consume(key, points);
        return { allowed: true };
      } catch (error) {
        if (error instanceof RateLimiterRes) return { allowed: false, retryAfterMs: Math.max(error.msBeforeNext, 1) };
        throw error;
      }
    },
  };
}
