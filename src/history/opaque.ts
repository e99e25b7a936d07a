/**
 * Opaque tokens (cursors and global ids): `prefix:field:field...` plus a
 * checksum, base64url-encoded. Decoding answers `null` for anything that is
 * not a token this module made, so callers turn it into the right error.
 *
 * Tokens are not signed. The FNV-1a checksum catches a token that was cut or
 * mistyped, not one that was forged: anyone can re-encode any fields with a
 * correct checksum. Validation was chosen over signing because a cursor is
 * not a secret and grants nothing: it only names a position in data the
 * viewer may already read, and authorization never trusts a cursor (every
 * read checks membership and visibility itself). Signing would add a key to
 * manage and rotate, and cursors that break when it changes, to protect
 * nothing. Instead every decoder validates each field it takes out before
 * use: integers are safe and in range (`parseSeq`), times lie within what
 * Date and PostgreSQL both hold (timeRange.ts), ids are canonical uuids or
 * valid user ids (userId.ts), and a cursor belongs to the conversation or
 * search it is used in. A forged cursor is then either refused or names a
 * position the viewer could have paged to anyway.
 */
import { fnv1a32 } from './checksum.ts';

/**
 * Where a token is spelled in UTF-8 before base64url: one buffer, reused,
 * as a page makes two tokens per message (its id and its cursor) and a
 * buffer allocated for each was about a fifth of making one. Room for 1,024
 * UTF-16 units, at most 3 bytes each; longer tokens get their own.
 */
const SCRATCH_UNITS = 1024;
const scratch = Buffer.allocUnsafe(SCRATCH_UNITS * 3);

/** Encodes `parts` under `prefix` into an opaque token. */
export function encodeOpaque(prefix: string, parts: readonly (string | number)[]): string {
  const payload = `${prefix}:${parts.join(':')}`;
  const text = `${payload}:${fnv1a32(payload).toString(36)}`;
  if (text.length > SCRATCH_UNITS) return Buffer.from(text, 'utf8').toString('base64url');
  return scratch.toString('base64url', 0, scratch.write(text, 0, 'utf8'));
}

/**
 * The leading fields of tokens that share them, spelled once: a page's 50
 * message ids all start `M:<its conversation's uuid>:`, and spelling and
 * checksumming that uuid again for each was a third of making them. Base64
 * turns each 3 bytes into 4 characters on their own, so a head of ASCII
 * whose length is a multiple of 3 encodes to a prefix of every token that
 * starts with it; and FNV-1a continues from the head's hash.
 */
export interface OpaqueHead {
  base64: string;
  hash: number;
}

/** The head `prefix:parts…:` of tokens, or null when it cannot be shared (not ASCII, or not a multiple of 3 bytes long). */
export function opaqueHead(prefix: string, parts: readonly string[]): OpaqueHead | null {
  const text = `${prefix}:${parts.join(':')}:`;
  if (text.length % 3 !== 0 || !/^[\x20-\x7e]*$/.test(text)) return null;
  return { base64: Buffer.from(text, 'latin1').toString('base64url'), hash: fnv1a32(text) };
}

/** `encodeOpaque(prefix, [...headParts, ...parts])` for the head made of `prefix` and `headParts`, whose tail `parts` are numbers. */
export function encodeOpaqueAfter(head: OpaqueHead, parts: readonly number[]): string {
  const fields = parts.join(':');
  const tail = `${fields}:${fnv1a32(fields, head.hash).toString(36)}`;
  return head.base64 + scratch.toString('base64url', 0, scratch.write(tail, 0, 'latin1'));
}

/**
 * The leading fields of tokens made many at a time whose other fields are
 * text (a member list's cursors: the list's prefix and conversation tag,
 * then a join time and a user id), with the FNV-1a hash to continue from:
 * spelling and hashing the lead again for each of 100 edges was a fifth of
 * making a cursor.
 */
export interface TokenLead {
  text: string;
  hash: number;
}

/** The lead `prefix:parts…:` of tokens made by `encodeOpaqueAfterLead`. */
export function tokenLead(prefix: string, parts: readonly string[]): TokenLead {
  const text = `${[prefix, ...parts].join(':')}:`;
  return { text, hash: fnv1a32(text) };
}

/** `encodeOpaque(prefix, [...leadParts, ...rest.split(':')])` for the lead made of `prefix` and `leadParts`, the rest of the fields already joined by ':'. */
export function encodeOpaqueAfterLead(lead: TokenLead, rest: string): string {
  const text = `${lead.text}${rest}:${fnv1a32(rest, lead.hash).toString(36)}`;
  if (text.length > SCRATCH_UNITS) return Buffer.from(text, 'utf8').toString('base64url');
  return scratch.toString('base64url', 0, scratch.write(text, 0, 'utf8'));
}

/**
 * The longest token decoded: room for the longest cursor made, a reaction's
 * users cursor with a 200-character user id of four-byte characters
 * (twice base64url-encoded, about 1.9 KB), and still a cheap bound on what
 * a client can make the server decode.
 */
export const MAX_TOKEN_LENGTH = 4096;

/** The fields of a token made by `encodeOpaque(prefix, …)` with `arity` fields, or null. */
export function decodeOpaque(prefix: string, arity: number, token: string): string[] | null {
  return decodeFields(prefix, arity, token, false);
}

/**
 * `decodeOpaque` for tokens whose last field is text spelled as it is, ':'
 * included (a user id): the fields before it and the checksum after it
 * hold none, so it is whatever lies between them.
 */
export function decodeOpaqueWithTextLast(prefix: string, arity: number, token: string): string[] | null {
  return decodeFields(prefix, arity, token, true);
}

function decodeFields(prefix: string, arity: number, token: string, textLast: boolean): string[] | null {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const checkAt = text.lastIndexOf(':');
  if (checkAt < 0) return null;
  const payload = text.slice(0, checkAt);
  const fields = payload.split(':');
  if (textLast && fields.length > arity + 1) fields.splice(arity, fields.length - arity, fields.slice(arity).join(':'));
  if (fields.length !== arity + 1 || fields[0] !== prefix) return null;
  if (text.slice(checkAt + 1) !== fnv1a32(payload).toString(36)) return null;
  // base64url has several spellings of one byte string; accept only ours.
  if (Buffer.from(text, 'utf8').toString('base64url') !== token) return null;
  return fields.slice(1);
}

/**
 * A conversation's stand-in in the cursors that edges carry one by one (a
 * page's, a member list's): its uuid's checksum, at most 7 characters
 * rather than 36. On a page of 50 the uuid was half of each cursor's bytes,
 * and cursors a quarter of the response. A cursor is still refused in
 * another conversation, unless their tags collide (one pair in 2^32),
 * and then it names a position there that the viewer could page to anyway.
 */
export function scopeTag(convId: string): string {
  // The last one made is kept: every edge of a page names the same conversation.
  if (convId !== lastScope.convId) lastScope = { convId, tag: fnv1a32(convId).toString(36) };
  return lastScope.tag;
}
let lastScope = { convId: '', tag: fnv1a32('').toString(36) };

/** A token decoded by `decodeScoped`: whether its scope is well-formed and names the conversation, and its other fields. */
export interface ScopedFields {
  wellFormedScope: boolean;
  ownScope: boolean;
  fields: string[];
}

/**
 * The fields of a token made under `prefix` with `scopeTag(convId)` as its
 * first field, or of one the previous version made under `legacyPrefix`
 * with the whole uuid there (still read, so clients paging across an
 * upgrade keep their place); null when it is neither.
 */
export function decodeScoped(prefix: string, legacyPrefix: string, arity: number, token: string, convId: string): ScopedFields | null {
  const tagged = decodeOpaque(prefix, arity, token);
  if (tagged !== null) {
    const [tag, ...fields] = tagged as [string, ...string[]];
    return { wellFormedScope: /^[0-9a-z]{1,7}$/.test(tag), ownScope: tag === scopeTag(convId), fields };
  }
  const legacy = decodeOpaque(legacyPrefix, arity, token);
  if (legacy === null) return null;
  const [uuid, ...fields] = legacy as [string, ...string[]];
  return { wellFormedScope: isUuid(uuid), ownScope: uuid === convId, fields };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `text` is a lower-case canonical UUID, the only form ids are made in. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** `text` as a seq (a safe integer >= 0 in canonical decimal), or null. */
export function parseSeq(text: string): number | null {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) return null;
  const seq = Number(text);
  return Number.isSafeInteger(seq) ? seq : null;
}
