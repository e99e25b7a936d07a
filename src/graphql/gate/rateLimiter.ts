/**
 * Per-user rate limits, counted where every server process sees the same
 * numbers: in PostgreSQL (rate-limiter-flexible's Drizzle store, one upsert
 * per check) when the server runs on it, in this process's memory on PGlite,
 * which only ever serves one process. Each limit allows `burst` actions in a
 * fixed window of `burst / perSecond` seconds: `perSecond` on average, at most
 * `burst` at once. If PostgreSQL cannot answer, the same limit is kept in
 * memory meanwhile (the library's insurance limiter) rather than failing or
 * letting everything through.
 */
import { type RateLimiterAbstract, RateLimiterDrizzle, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimit, RateLimitSettings } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { rateLimits } from '../../db/schema.ts';

type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Takes `points` from `userId`'s budget for `action` (a mutation's field name, `subscribe` or `connect`). */
export interface RateLimiter {
  take(userId: string, action: string, points: number): Promise<RateDecision>;
}

/** Where the counters live: PostgreSQL through drizzle, or memory (PGlite, tests). */
export type RateLimitStore = { kind: 'postgres'; db: Database } | { kind: 'memory' };

/** Makes the limiter for `settings` over `store`. */
export function createRateLimiter(settings: RateLimitSettings, store: RateLimitStore): RateLimiter {
  const make = (name: string, limit: RateLimit): RateLimiterAbstract => {
    const options = { keyPrefix: name, points: limit.burst, duration: limit.burst / limit.perSecond };
    const memory = new RateLimiterMemory(options);
    if (store.kind === 'memory') return memory;
    return new RateLimiterDrizzle({ ...options, storeClient: store.db, schema: rateLimits, insuranceLimiter: memory });
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
