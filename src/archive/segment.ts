/**
 * The segment format: the bodies of one conversation's consecutive seqs,
 * compressed and checksummed, immutable once written. No I/O here; the
 * compression runs on libuv's thread pool (zlib's async functions), so a
 * server process that archives or reads cold history keeps its event loop.
 *
 * Layout, bytes:
 *
 *     BSEG1\n<header JSON>\n<brotli of the entries JSON>
 *
 * The header is exactly `{"conversation","fromSeq","toSeq","count","codec","checksum"}`
 * in that order, as `JSON.stringify` writes it. `checksum` is the sha256
 * (hex) of the header's other fields (that same JSON without `checksum`), a
 * newline and the compressed content, so a changed byte anywhere, header
 * included, fails `decodeSegment`. The entries are `[seq, text]` pairs in
 * ascending seq order: what a `message_bodies` row stores, without its
 * search vector (archived messages are not searchable; dropping the vectors
 * is most of what archiving saves).
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

const MAGIC = Buffer.from('BSEG1\n');
const NEWLINE = 0x0a;
/** Quality 6 of 11: on chat text, 1.9 ms per 1,000 messages at 16% of their size; 11 takes 150 ms for 17%. */
const BROTLI_QUALITY = 6;

/** One archived body: a message's seq and its text. */
export interface SegmentEntry {
  seq: number;
  text: string;
}

/** What a segment says about itself; `archive_segments` records the same. */
interface SegmentHeader {
  conversation: string;
  fromSeq: number;
  toSeq: number;
  count: number;
  codec: 'br';
  /** sha256 (hex) of the other header fields and the compressed content. */
  checksum: string;
}

/** How large a segment may grow: whichever limit is reached first ends it. */
export interface SegmentLimits {
  messages: number;
  /** Compressed bytes of the whole segment (header included), unless one message alone is larger. */
  bytes: number;
}

/** The size: about 1,000 messages or 256 KB compressed. */
export const SEGMENT_LIMITS: SegmentLimits = { messages: 1000, bytes: 256 * 1024 };

/** An encoded segment, ready to store. */
export interface EncodedSegment {
  header: SegmentHeader;
  bytes: Buffer;
}

/** A decoded segment, or what is wrong with the bytes. */
export type DecodedSegment = { ok: true; header: SegmentHeader; entries: SegmentEntry[] } | { ok: false; problem: string };

/**
 * Encodes `entries` (at least one, seqs ascending) of `conversation`. The
 * seq range is the first entry's to the last one's.
 */
export async function encodeSegment(conversation: string, entries: readonly SegmentEntry[]): Promise<EncodedSegment> {
  if (entries.length === 0) throw new Error('encodeSegment needs at least one entry, got none.');
  for (let i = 1; i < entries.length; i++) {
    if (!(entries[i]!.seq > entries[i - 1]!.seq)) {
      throw new Error(`encodeSegment needs entries in ascending seq order, got seq ${entries[i]!.seq} after ${entries[i - 1]!.seq}.`);
    }
  }
  const content = Buffer.from(JSON.stringify(entries.map((e) => [e.seq, e.text])));
  const compressed = await compress(content, {
    params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: content.length },
  });
  const fields = { conversation, fromSeq: entries[0]!.seq, toSeq: entries.at(-1)!.seq, count: entries.length, codec: 'br' as const };
  const header: SegmentHeader = { ...fields, checksum: checksumOf(fields, compressed) };
  return { header, bytes: Buffer.concat([MAGIC, Buffer.from(JSON.stringify(header)), Buffer.from([NEWLINE]), compressed]) };
}

/**
 * Encodes the longest prefix of `entries` within `limits`, answering how
 * many it took (at least one). The compressed size is known only after
 * compressing, so an oversized try is cut in proportion and tried again.
 */
export async function encodeWithin(
  conversation: string,
  entries: readonly SegmentEntry[],
  limits: SegmentLimits = SEGMENT_LIMITS,
): Promise<EncodedSegment & { taken: number }> {
  let taken = Math.min(entries.length, limits.messages);
  for (;;) {
    const segment = await encodeSegment(conversation, entries.slice(0, taken));
    if (segment.bytes.length <= limits.bytes || taken === 1) return { ...segment, taken };
    // 0.9: land under the limit, not on it, so a second try usually fits.
    taken = Math.max(1, Math.min(taken - 1, Math.floor(taken * (limits.bytes / segment.bytes.length) * 0.9)));
  }
}

/** Decodes a segment, checking its checksum, its header and every entry against the header. */
export async function decodeSegment(bytes: Uint8Array): Promise<DecodedSegment> {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (data.length < MAGIC.length || !data.subarray(0, MAGIC.length).equals(MAGIC)) {
    return { ok: false, problem: 'it does not start with the segment marker BSEG1' };
  }
  const end = data.indexOf(NEWLINE, MAGIC.length);
  if (end === -1) return { ok: false, problem: 'its header has no end' };
  const headerText = data.subarray(MAGIC.length, end).toString('utf8');
  const header = parseHeader(headerText);
  if (header === null) return { ok: false, problem: 'its header is not a segment header' };
  const compressed = data.subarray(end + 1);
  const { checksum, ...fields } = header;
  if (checksumOf(fields, compressed) !== checksum) return { ok: false, problem: 'its checksum does not match its content' };
  let content: Buffer;
  try {
    content = await decompress(compressed);
  } catch {
    return { ok: false, problem: 'its content does not decompress' };
  }
  const entries = parseEntries(content.toString('utf8'));
  if (entries === null) return { ok: false, problem: 'its content is not a list of [seq, text] entries' };
  if (entries.length !== header.count) return { ok: false, problem: `it holds ${entries.length} entries, its header says ${header.count}` };
  for (let i = 0; i < entries.length; i++) {
    const seq = entries[i]!.seq;
    if (i > 0 && !(seq > entries[i - 1]!.seq)) return { ok: false, problem: `its seqs are not ascending at seq ${seq}` };
  }
  if (entries[0]!.seq !== header.fromSeq || entries.at(-1)!.seq !== header.toSeq) {
    return { ok: false, problem: `its entries span seqs ${entries[0]!.seq} to ${entries.at(-1)!.seq}, its header says ${header.fromSeq} to ${header.toSeq}` };
  }
  return { ok: true, header, entries };
}

function checksumOf(fields: Omit<SegmentHeader, 'checksum'>, compressed: Uint8Array): string {
  const canonical = { conversation: fields.conversation, fromSeq: fields.fromSeq, toSeq: fields.toSeq, count: fields.count, codec: fields.codec };
  return createHash('sha256').update(JSON.stringify(canonical)).update('\n').update(compressed).digest('hex');
}

/** The header, if `text` is exactly one as `encodeSegment` writes it; null otherwise. */
function parseHeader(text: string): SegmentHeader | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const h = parsed as Record<string, unknown>;
  const seq = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 1;
  if (
    typeof h.conversation !== 'string' ||
    !seq(h.fromSeq) ||
    !seq(h.toSeq) ||
    !seq(h.count) ||
    h.codec !== 'br' ||
    typeof h.checksum !== 'string' ||
    !/^[0-9a-f]{64}$/.test(h.checksum)
  ) {
    return null;
  }
  const header: SegmentHeader = {
    conversation: h.conversation,
    fromSeq: h.fromSeq as number,
    toSeq: h.toSeq as number,
    count: h.count as number,
    codec: 'br',
    checksum: h.checksum,
  };
  // Only the exact spelling counts: then every byte of the header is covered by the checksum.
  return JSON.stringify(header) === text ? header : null;
}

function parseEntries(text: string): SegmentEntry[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return null;
  const entries: SegmentEntry[] = [];
  for (const item of parsed) {
    if (!Array.isArray(item) || item.length !== 2 || !Number.isSafeInteger(item[0]) || typeof item[1] !== 'string') return null;
    entries.push({ seq: item[0] as number, text: item[1] });
  }
  return entries;
}
