/**
 * HS256 signatures checked with node:crypto, synchronously, ahead of jose.
 * jose 6 verifies through WebCrypto, and Node's WebCrypto HMAC (a job
 * object, a promise, key checks) was 3.4-3.8% of a worker's samples under
 * the bench's random pages, where 2,000 users' first requests verify their
 * tokens: 80-140 µs of CPU a first verification, against 12-34 with this
 * check, jose's claim checks included (README Performance, the
 * twenty-sixth session).
 *
 * This check can only say yes. A token whose signature is not exactly the
 * one our secret makes, spelled as we spell it, or whose header is not a
 * plain HS256 one, goes to jose, which decides; so every refusal, every
 * key-set token and every header jose has rules for (`crit`, `b64`) stays
 * jose's. What passes here has its claims checked by jose too
 * (`UnsecuredJWT.decode` of the same payload: tokens.ts).
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

/** Header fields a plain HS256 token may carry; any other sends it to jose. */
const PLAIN_HEADER_FIELDS = new Set(['alg', 'typ', 'kid']);

/** The header of an unsecured JWT (`alg: none`), whose payload jose's `UnsecuredJWT.decode` checks the claims of. */
const UNSECURED_HEADER = Buffer.from('{"alg":"none"}').toString('base64url');

/**
 * A check of compact JWTs against HS256 with `secret` (UTF-8, as jose
 * takes it): the token's payload as an unsecured JWT when the signature is
 * ours, else null (let jose decide).
 */
export function hs256SignatureCheck(secret: string): (token: string) => string | null {
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  return (token) => {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [header, payload, signature] = parts as [string, string, string];
    if (!isPlainHs256Header(header)) return null;
    const expected = Buffer.from(createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url'));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return `${UNSECURED_HEADER}.${payload}.`;
  };
}

/** Whether `encoded` is canonical base64url of a JSON object header of alg HS256 with no field but alg, typ and kid. */
function isPlainHs256Header(encoded: string): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return false;
  const bytes = Buffer.from(encoded, 'base64url');
  // Buffer reads several spellings of one byte string; jose's decoder is stricter, so any but ours goes to it.
  if (bytes.toString('base64url') !== encoded) return false;
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString('utf8'));
  } catch {
    return false;
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return false;
  const fields = header as Record<string, unknown>;
  return fields.alg === 'HS256' && Object.keys(fields).every((field) => PLAIN_HEADER_FIELDS.has(field));
}
