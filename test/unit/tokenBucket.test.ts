import { describe, expect, it } from 'vitest';
import { type Bucket, takeToken } from '../../src/history/tokenBucket.ts';

const limit = { perSecond: 2, burst: 3 };

/** Takes `count` tokens at `nowMs`, answering which were allowed. */
function takeMany(bucket: Bucket | undefined, nowMs: number, count: number): { allowed: boolean[]; bucket: Bucket | undefined } {
  const allowed: boolean[] = [];
  for (let i = 0; i < count; i++) {
    const result = takeToken(bucket, nowMs, limit);
    allowed.push(result.allowed);
    bucket = result.bucket;
  }
  return { allowed, bucket };
}

describe('Token bucket', () => {
  it('allows a full burst at once, then refuses', () => {
    expect(takeMany(undefined, 0, 4).allowed).toEqual([true, true, true, false]);
  });

  it('says how long until the next token', () => {
    const { bucket } = takeMany(undefined, 0, 3);
    expect(takeToken(bucket, 0, limit)).toEqual({ allowed: false, bucket: { tokens: 0, atMs: 0 }, retryAfterMs: 500 });
    expect(takeToken(bucket, 250, limit)).toMatchObject({ allowed: false, retryAfterMs: 250 });
  });

  it('refills at the rate, never above the burst', () => {
    const { bucket } = takeMany(undefined, 0, 3);
    expect(takeMany(bucket, 500, 2).allowed).toEqual([true, false]);
    expect(takeMany(bucket, 60_000, 4).allowed).toEqual([true, true, true, false]);
  });

  it('treats a clock that went backwards as no time passed', () => {
    const { bucket } = takeMany(undefined, 1000, 3);
    expect(takeToken(bucket, 0, limit).allowed).toBe(false);
  });
});
