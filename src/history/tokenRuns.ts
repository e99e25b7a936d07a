/**
 * Tokens of consecutive seqs made a run at a time. A page of 50 asks for a
 * cursor and an id per edge, one after another in seq order, and making
 * each alone (its text, checksum, bytes and base64, two calls into C++)
 * was 6.5-7% of a worker's samples under random newest pages (bench:cpu,
 * README Performance, the twenty-sixth session). A run spells the tokens
 * of many seqs by hand into one buffer and base64-encodes it once.
 *
 * Base64 turns each 3 bytes into 4 characters on their own, so a token
 * that starts at a multiple of 3 bytes encodes to a slice of the whole;
 * and a token whose length is not a multiple of 3, followed by zero bytes
 * up to one, encodes to that slice's first `ceil(4 × length / 3)`
 * characters exactly as alone (the zero bits are the padding alone would
 * get). So each token is spelled, padded with zero bytes, and sliced back
 * out.
 */
import { fnv1a32 } from './checksum.ts';

/** How many tokens a run makes once a caller is seen going seq by seq: a page's worth and some. */
export const RUN_LENGTH = 64;

/** The highest seq a run reaches: every seq of a run is a safe integer. */
const LAST_RUN_SEQ = Number.MAX_SAFE_INTEGER - RUN_LENGTH;

/** Printable ASCII only: what one byte a character spells. */
const ASCII = /^[\x20-\x7e]*$/;

const FNV_PRIME = 0x01000193;
const COLON = 0x3a;
const BASE36 = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz', 'latin1');
/** The longest token a run spells besides its lead: a safe integer's 16 digits, ':', 7 base-36 digits, 2 zero bytes. */
const MAX_TAIL = 26;

/** Where runs are spelled, grown when a run needs more; a run is encoded before the next starts. */
let scratch = Buffer.allocUnsafe(RUN_LENGTH * 64);
/** A number's digits, least significant first. */
const digits = new Uint8Array(16);

/**
 * `base64url(lead + seq + ':' + checksum)` for `count` seqs from `fromSeq`
 * (safe integers, not negative), the checksum being FNV-1a of everything
 * before it continued from `leadHash` (`fnv1a32(lead)`), in base 36: what
 * encodeOpaque makes of the lead's fields and the seq. `lead` must be
 * printable ASCII. The bytes are spelled by hand, with no string made
 * for any token until the slices: that was most of a run's cost.
 */
export function encodeSeqRun(lead: string, leadHash: number, fromSeq: number, count: number): string[] {
  const leadBytes = Buffer.from(lead, 'latin1');
  const need = count * (leadBytes.length + MAX_TAIL);
  if (scratch.length < need) scratch = Buffer.allocUnsafe(need);
  const bytes = scratch;
  const lengths = new Array<number>(count);
  let at = 0;
  for (let k = 0; k < count; k++) {
    const start = at;
    bytes.set(leadBytes, at);
    at += leadBytes.length;
    let n = 0;
    let seq = fromSeq + k;
    // Below 2^31 the digits come by integer division, about twice as fast as by floating point.
    if (seq <= 0x7fffffff) {
      do {
        const rest = (seq / 10) | 0;
        digits[n++] = 0x30 + seq - rest * 10;
        seq = rest;
      } while (seq > 0);
    } else {
      do {
        digits[n++] = 0x30 + (seq % 10);
        seq = Math.floor(seq / 10);
      } while (seq > 0);
    }
    let hash = leadHash;
    while (n > 0) {
      const digit = digits[--n]!;
      bytes[at++] = digit;
      hash = Math.imul(hash ^ digit, FNV_PRIME);
    }
    bytes[at++] = COLON;
    let check = hash >>> 0;
    do {
      const rest = Math.floor(check / 36);
      digits[n++] = BASE36[check - rest * 36]!;
      check = rest;
    } while (check > 0);
    while (n > 0) bytes[at++] = digits[--n]!;
    lengths[k] = at - start;
    while ((at - start) % 3 !== 0) bytes[at++] = 0;
  }
  const encoded = bytes.toString('base64url', 0, at);
  const tokens = new Array<string>(count);
  let from = 0;
  for (let k = 0; k < count; k++) {
    const length = lengths[k]!;
    tokens[k] = encoded.slice(from, from + Math.ceil((length * 4) / 3));
    from += Math.ceil(length / 3) * 4;
  }
  return tokens;
}

/**
 * A token maker for (scope, seq) that notices a caller going seq by seq in
 * one scope and then makes the next RUN_LENGTH tokens in one run (either
 * way: pages list oldest first, some callers walk down), answering from
 * that run while the caller stays in it. Any other call is made alone by
 * `single`. `leadOf(scope)` is the ASCII text every token of the scope
 * starts with, the seq following it; a scope whose lead is not ASCII is
 * always made alone. The tokens are the same either way: only the work
 * differs.
 */
export function seqTokenMaker(leadOf: (scope: string) => string, single: (scope: string, seq: number) => string): (scope: string, seq: number) => string {
  let scope: string | null = null;
  let lead = '';
  let leadHash = 0;
  let batchable = false;
  let lastSeq = Number.NaN;
  let runFrom = 0;
  let run: string[] = [];
  return (wanted, seq) => {
    if (wanted !== scope) {
      scope = wanted;
      lead = leadOf(wanted);
      batchable = ASCII.test(lead);
      leadHash = fnv1a32(lead);
      run = [];
      lastSeq = Number.NaN;
    }
    const previous = lastSeq;
    lastSeq = seq;
    // Runs hold seqs from 0 to where every seq of a run is still a safe integer; anything else is made alone.
    if (!Number.isSafeInteger(seq) || seq < 0 || seq > LAST_RUN_SEQ) return single(wanted, seq);
    const inRun = seq - runFrom;
    if (inRun >= 0 && inRun < run.length) return run[inRun]!;
    if (!batchable) return single(wanted, seq);
    if (seq === previous + 1 && previous >= 0) {
      runFrom = previous;
      run = encodeSeqRun(lead, leadHash, runFrom, RUN_LENGTH);
      return run[1]!;
    }
    if (seq === previous - 1 && seq > 0) {
      runFrom = Math.max(0, previous - RUN_LENGTH + 1);
      run = encodeSeqRun(lead, leadHash, runFrom, previous - runFrom + 1);
      return run[seq - runFrom]!;
    }
    return single(wanted, seq);
  };
}
