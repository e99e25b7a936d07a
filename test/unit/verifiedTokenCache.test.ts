import { describe, expect, it } from 'vitest';
import { VerifiedTokenCache } from '../../src/auth/verifiedTokenCache.ts';

const alice = { userId: 'alice', admin: false, expiresAtMs: 10_000 };
const bob = { userId: 'bob', admin: false, expiresAtMs: 10_000 };
const carol = { userId: 'carol', admin: false, expiresAtMs: 10_000 };

describe('Verified token cache', () => {
  it('answers a cached token until just before its exp, and not at or after it', () => {
    const cache = new VerifiedTokenCache(10);
    cache.set('t-alice', alice);
    expect([cache.get('t-alice', 9_999), cache.get('t-alice', 10_000), cache.get('t-alice', 9_999)]).toEqual([alice, undefined, undefined]);
  });

  it('forgets the least recently used token when full', () => {
    const cache = new VerifiedTokenCache(2);
    cache.set('t-alice', alice);
    cache.set('t-bob', bob);
    cache.get('t-alice', 0);
    cache.set('t-carol', carol);
    expect([cache.get('t-alice', 0), cache.get('t-bob', 0), cache.get('t-carol', 0), cache.size]).toEqual([alice, undefined, carol, 2]);
  });

  it('answers nothing for a token it never saw', () => {
    expect(new VerifiedTokenCache(2).get('t-unknown', 0)).toBeUndefined();
  });
});
