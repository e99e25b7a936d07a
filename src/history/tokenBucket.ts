/**
 * The token bucket behind rate limits: `burst` tokens at most, refilled at
 * `perSecond`; each action takes one. Pure: the caller keeps the state and
 * passes the clock.
 */

/** A bucket's state: tokens left as of `atMs`. */
export interface Bucket {
  tokens: number;
  atMs: number;
}

export interface BucketLimit {
  perSecond: number;
  burst: number;
}

export type TakeResult = { allowed: true; bucket: Bucket } | { allowed: false; bucket: Bucket; retryAfterMs: number };

/** Takes one token from `bucket` (a full one when undefined) at `nowMs`. */
export function takeToken(bucket: Bucket | undefined, nowMs: number, limit: BucketLimit): TakeResult {
  const elapsedMs = bucket === undefined ? 0 : Math.max(0, nowMs - bucket.atMs);
  const tokens = bucket === undefined ? limit.burst : Math.min(limit.burst, bucket.tokens + (elapsedMs * limit.perSecond) / 1000);
  if (tokens >= 1) return { allowed: true, bucket: { tokens: tokens - 1, atMs: nowMs } };
  return { allowed: false, bucket: { tokens, atMs: nowMs }, retryAfterMs: Math.ceil(((1 - tokens) * 1000) / limit.perSecond) };
}
