import { describe, expect, it } from 'vitest';
import { createTokenVerifier, signToken } from '../../src/auth/tokens.ts';

const SECRET = 'unit-test-secret-that-is-at-least-32-chars';

describe('Token verifier', () => {
  it('accepts a token, then refuses it once its exp has passed, though it was cached', async () => {
    let nowMs = Date.now();
    const verify = createTokenVerifier(SECRET, () => nowMs);
    const header = `Bearer ${await signToken(SECRET, 'alice', 60)}`;
    expect(await verify(header)).toEqual({ kind: 'user', userId: 'alice' });
    expect(await verify(header)).toEqual({ kind: 'user', userId: 'alice' });
    nowMs += 61_000;
    expect(await verify(header)).toEqual({ kind: 'invalid', reason: expect.any(String) });
  });

  it('does not cache a refusal: a token signed with another secret stays refused', async () => {
    const verify = createTokenVerifier(SECRET);
    const header = `Bearer ${await signToken('another-secret-that-is-at-least-32-chars', 'alice', 60)}`;
    expect((await verify(header)).kind).toBe('invalid');
    expect((await verify(header)).kind).toBe('invalid');
  });

  it('treats a missing header as anonymous and a non-Bearer one as invalid', async () => {
    const verify = createTokenVerifier(SECRET);
    expect([(await verify(undefined)).kind, (await verify('')).kind, (await verify('Basic abc')).kind]).toEqual([
      'anonymous',
      'anonymous',
      'invalid',
    ]);
  });
});
