/**
 * Bearer tokens: JWTs whose `sub` is the user id, HS256 with our secret or
 * RS256/ES256 from an identity provider's key set (`JWT_JWKS_URL`).
 * Verification pins the algorithms (so `alg: none` and key-confusion tokens
 * fail), requires `exp`, and checks `iss`/`aud` when configured.
 */
import { createRemoteJWKSet, type JWTHeaderParameters, type JWTVerifyGetKey, SignJWT, jwtVerify, UnsecuredJWT } from 'jose';
import { isValidUserId, MAX_USER_ID_LENGTH } from '../history/userId.ts';
import { hs256SignatureCheck } from './hs256Signature.ts';
import { VerifiedTokenCache } from './verifiedTokenCache.ts';

/** Who a request is from, or why we could not tell. */
export type Authentication =
  /** `admin`: the token carries the `admin` role (`roles: ["admin"]` or `role: "admin"`). */
  | { kind: 'user'; userId: string; admin: boolean }
  | { kind: 'anonymous' }
  | { kind: 'invalid'; reason: string };

const ALGORITHM = 'HS256';

const CACHED_TOKENS = 10_000;

const KEY_SET_ALGORITHMS = ['RS256', 'ES256'];

/** Which tokens to accept. */
export interface TokenRules {
  /** HS256 secret; null to accept only key-set tokens. */
  secret: string | null;
  /** An identity provider's JSON Web Key Set, for RS256 and ES256 tokens. */
  jwksUrl?: string | null;
  /** Required `iss` and `aud`, when set. */
  issuer?: string | null;
  audience?: string | null;
}

/**
 * Makes a verifier for `Authorization` header values under `rules`.
 * Tokens that verified are cached until their `exp` (see VerifiedTokenCache).
 */
export function createTokenVerifier(
  rules: TokenRules | string,
  now: () => number = Date.now,
): (header: string | undefined) => Promise<Authentication> {
  const { secret, jwksUrl, issuer, audience } = typeof rules === 'string' ? { secret: rules } : rules;
  // Imported once: handing jose the raw bytes imports the key again on every verification (about 2x the cost).
  const hmacKey =
    secret === null ? null : crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const keySet = jwksUrl ? createRemoteJWKSet(new URL(jwksUrl)) : null;
  const algorithms = [...(hmacKey ? [ALGORITHM] : []), ...(keySet ? KEY_SET_ALGORITHMS : [])];
  // The header's alg picks the key; an alg outside `algorithms` never gets this far.
  const key: JWTVerifyGetKey = async (header: JWTHeaderParameters, token) =>
    header.alg === ALGORITHM ? (await hmacKey)! : keySet!(header, token);
  // Our own HS256 signatures are checked synchronously first (hs256Signature.ts); jose decides every other token.
  const ownSignature = secret === null ? null : hs256SignatureCheck(secret);
  const cache = new VerifiedTokenCache(CACHED_TOKENS);
  return async (header) => {
    if (header === undefined || header === '') return { kind: 'anonymous' };
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
    if (!match) return { kind: 'invalid', reason: 'The Authorization header must be `Bearer <token>`.' };
    const token = match[1]!;
    const cached = cache.get(token, now());
    if (cached !== undefined) return { kind: 'user', userId: cached.userId, admin: cached.admin };
    try {
      const claimRules = {
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(now()),
        ...(issuer ? { issuer } : {}),
        ...(audience ? { audience } : {}),
      };
      const signed = ownSignature?.(token) ?? null;
      const { payload } = signed !== null ? UnsecuredJWT.decode(signed, claimRules) : await jwtVerify(token, key, { algorithms, ...claimRules });
      if (typeof payload.sub !== 'string' || !isValidUserId(payload.sub)) {
        return { kind: 'invalid', reason: `The token's \`sub\` claim must be a user id of 1 to ${MAX_USER_ID_LENGTH} characters.` };
      }
      const admin = hasAdminRole(payload);
      cache.set(token, { userId: payload.sub, admin, expiresAtMs: payload.exp! * 1000 });
      return { kind: 'user', userId: payload.sub, admin };
    } catch (error) {
      const code = (error as { code?: string }).code;
      const reason = code === 'ERR_JWT_EXPIRED' ? 'The token has expired.' : 'The token is not valid.';
      return { kind: 'invalid', reason };
    }
  };
}

/** Whether the claims grant the `admin` role: `roles` containing "admin", or `role` equal to it. */
function hasAdminRole(payload: Record<string, unknown>): boolean {
  return (Array.isArray(payload.roles) && payload.roles.includes('admin')) || payload.role === 'admin';
}

/** Signs a token for `userId` that expires after `ttlSeconds`. */
export async function signToken(secret: string, userId: string, ttlSeconds: number, claims: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(userId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
