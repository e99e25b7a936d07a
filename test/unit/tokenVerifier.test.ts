import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTokenVerifier, signToken } from '../../src/auth/tokens.ts';

const SECRET = 'unit-test-secret-that-is-at-least-32-chars';

describe('Token verifier', () => {
  it('accepts a token, then refuses it once its exp has passed, though it was cached', async () => {
    let nowMs = Date.now();
    const verify = createTokenVerifier(SECRET, () => nowMs);
    const header = `Bearer ${await signToken(SECRET, 'alice', 60)}`;
    expect(await verify(header)).toEqual({ kind: 'user', userId: 'alice', admin: false });
    expect(await verify(header)).toEqual({ kind: 'user', userId: 'alice', admin: false });
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

describe('Token verifier: issuer, audience and an identity provider key set', () => {
  let jwksServer: Server;
  let jwksUrl: string;
  let providerKey: CryptoKey;
  let strangerKey: CryptoKey;

  beforeAll(async () => {
    const provider = await generateKeyPair('RS256', { extractable: true });
    const stranger = await generateKeyPair('ES256');
    providerKey = provider.privateKey;
    strangerKey = stranger.privateKey;
    const jwk = { ...(await exportJWK(provider.publicKey)), kid: 'provider-1', alg: 'RS256', use: 'sig' };
    jwksServer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(() => new Promise<void>((resolve) => jwksServer.close(() => resolve())));

  const providerToken = (key: CryptoKey, alg: string, claims: Record<string, unknown> = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg, kid: 'provider-1' }).setSubject('alice').setExpirationTime('1h').sign(key);

  it('accepts an RS256 token signed by the key set, and still HS256 tokens signed with the secret', async () => {
    const verify = createTokenVerifier({ secret: SECRET, jwksUrl });
    expect(await verify(`Bearer ${await providerToken(providerKey, 'RS256')}`)).toEqual({ kind: 'user', userId: 'alice', admin: false });
    expect(await verify(`Bearer ${await signToken(SECRET, 'bob', 60)}`)).toEqual({ kind: 'user', userId: 'bob', admin: false });
  });

  it('refuses a token signed by a key outside the set', async () => {
    const verify = createTokenVerifier({ secret: null, jwksUrl });
    expect((await verify(`Bearer ${await providerToken(strangerKey, 'ES256')}`)).kind).toBe('invalid');
  });

  it('refuses HS256 tokens when only a key set is configured', async () => {
    const verify = createTokenVerifier({ secret: null, jwksUrl });
    expect((await verify(`Bearer ${await signToken(SECRET, 'bob', 60)}`)).kind).toBe('invalid');
  });

  it('requires the configured iss and aud', async () => {
    const verify = createTokenVerifier({ secret: null, jwksUrl, issuer: 'https://id.example.com', audience: 'backscroll' });
    const good = await providerToken(providerKey, 'RS256', { iss: 'https://id.example.com', aud: 'backscroll' });
    const wrongIssuer = await providerToken(providerKey, 'RS256', { iss: 'https://evil.example.com', aud: 'backscroll' });
    const noAudience = await providerToken(providerKey, 'RS256', { iss: 'https://id.example.com' });
    expect([(await verify(`Bearer ${good}`)).kind, (await verify(`Bearer ${wrongIssuer}`)).kind, (await verify(`Bearer ${noAudience}`)).kind]).toEqual([
      'user',
      'invalid',
      'invalid',
    ]);
  });
});

describe('Token verifier: our HS256 signatures checked without WebCrypto', () => {
  const secretKey = new TextEncoder().encode(SECRET);
  const sign = (header: Record<string, unknown>, claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(secretKey);
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('accepts a token signed with the secret without WebCrypto, and leaves one signed otherwise to jose, which refuses it', async () => {
    const subtleVerify = vi.spyOn(crypto.subtle, 'verify');
    const verify = createTokenVerifier(SECRET);
    expect(await verify(`Bearer ${await signToken(SECRET, 'alice', 60)}`)).toEqual({ kind: 'user', userId: 'alice', admin: false });
    expect(subtleVerify).not.toHaveBeenCalled();
    expect((await verify(`Bearer ${await signToken('another-secret-that-is-at-least-32-chars', 'alice', 60)}`)).kind).toBe('invalid');
    expect(subtleVerify).toHaveBeenCalledTimes(1);
  });

  it('checks the claims of what it accepts as jose does: exp, sub, iss and aud', async () => {
    const verify = createTokenVerifier({ secret: SECRET, issuer: 'https://id.example.com', audience: 'backscroll' });
    const rules = { iss: 'https://id.example.com', aud: 'backscroll' };
    const good = await sign({ alg: 'HS256', typ: 'JWT' }, { ...rules, sub: 'alice', exp: inAnHour(), roles: ['admin'] });
    const expired = await sign({ alg: 'HS256' }, { ...rules, sub: 'alice', exp: Math.floor(Date.now() / 1000) - 10 });
    const noExp = await sign({ alg: 'HS256' }, { ...rules, sub: 'alice' });
    const noSub = await sign({ alg: 'HS256' }, { ...rules, exp: inAnHour() });
    const wrongIssuer = await sign({ alg: 'HS256' }, { ...rules, iss: 'https://evil.example.com', sub: 'alice', exp: inAnHour() });
    const wrongAudience = await sign({ alg: 'HS256' }, { ...rules, aud: 'other', sub: 'alice', exp: inAnHour() });
    expect(await verify(`Bearer ${good}`)).toEqual({ kind: 'user', userId: 'alice', admin: true });
    expect(await verify(`Bearer ${expired}`)).toEqual({ kind: 'invalid', reason: 'The token has expired.' });
    const refused = await Promise.all([noExp, noSub, wrongIssuer, wrongAudience].map((token) => verify(`Bearer ${token}`)));
    expect(refused.map((result) => result.kind)).toEqual(['invalid', 'invalid', 'invalid', 'invalid']);
  });

  it('leaves headers jose has rules for, and signatures spelled otherwise, to jose', async () => {
    const subtleVerify = vi.spyOn(crypto.subtle, 'verify');
    const verify = createTokenVerifier(SECRET);
    const claims = { sub: 'alice', exp: inAnHour() };
    // A critical header field jose does not know, signed by hand (jose will not sign it): a valid signature, and still refused.
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const signingInput = `${part({ alg: 'HS256', crit: ['x-backscroll'], 'x-backscroll': 1 })}.${part(claims)}`;
    const critical = `${signingInput}.${createHmac('sha256', SECRET).update(signingInput).digest('base64url')}`;
    expect((await verify(`Bearer ${critical}`)).kind).toBe('invalid');
    // The same signature bytes spelled with padding: not our spelling, so jose decides (it reads padding, and accepts).
    const padded = `${await sign({ alg: 'HS256' }, claims)}=`;
    expect((await verify(`Bearer ${padded}`)).kind).toBe('user');
    // jose refused the first before checking its signature, and checked the second's through WebCrypto.
    expect(subtleVerify).toHaveBeenCalledTimes(1);
  });
});
