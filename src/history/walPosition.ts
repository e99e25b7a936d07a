/**
 * WAL positions (PostgreSQL's `pg_lsn`, written `16/B374D848`) as the
 * consistency tokens clients carry between requests: a response says how far
 * the primary's WAL had got when it answered, and a request that sends it
 * back must be read from a copy that has replayed at least that far.
 *
 * The token is the position as PostgreSQL prints it, not an opaque blob: it
 * promises nothing a client could forge to its advantage (a position far in
 * the future only sends its own reads to the primary), and an operator can
 * compare it with `pg_last_wal_replay_lsn()` by eye.
 */

/** The response and request header that carries the token. */
export const CONSISTENCY_HEADER = 'backscroll-consistency';

// Two hexadecimal halves of 32 bits each, as PostgreSQL's `%X/%X` prints them.
const POSITION = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** The position `text` names (`16/B374D848`), or null when it is not one. */
export function parseWalPosition(text: string): bigint | null {
  const match = POSITION.exec(text);
  if (match === null) return null;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** `position` as PostgreSQL prints it (upper case, no leading zeros), the token's one spelling. */
export function formatWalPosition(position: bigint): string {
  return `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The later of two positions; null stands for "none known". */
export function laterPosition(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

/** What a request's `Backscroll-Consistency` header asks for. */
export type TokenReading =
  /** `position` null: no header, read from any copy in rotation. */
  | { ok: true; position: bigint | null }
  | { ok: false; problem: string };

/** Longest header value echoed back in a refusal. */
const ECHO_LIMIT = 40;

/**
 * Reads the request header (absent or empty: no token). A malformed token is
 * refused, never ignored: a client that believes it asked for its own writes
 * must not silently get an older copy.
 */
export function readConsistencyToken(header: string | undefined): TokenReading {
  if (header === undefined || header.trim() === '') return { ok: true, position: null };
  const position = parseWalPosition(header.trim());
  if (position !== null) return { ok: true, position };
  const shown = header.length > ECHO_LIMIT ? `${header.slice(0, ECHO_LIMIT)}…` : header;
  return {
    ok: false,
    problem: `The Backscroll-Consistency header must be a token from an earlier response, a WAL position such as 16/B374D848, got "${shown}".`,
  };
}
