import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/archive/duration.ts';
import { decodeSegment, encodeSegment, encodeWithin, type SegmentEntry, SEGMENT_LIMITS } from '../../src/archive/segment.ts';

const CONVERSATION = '0b7c6f52-3f0a-4c1e-9d55-5d2f1b7e9a01';
const entriesFrom = (from: number, count: number, text = (seq: number) => `message ${seq}`): SegmentEntry[] =>
  Array.from({ length: count }, (_, i) => ({ seq: from + i, text: text(from + i) }));
const MIXED: SegmentEntry[] = [
  { seq: 3, text: 'plain' },
  { seq: 4, text: '历史消息同步有延迟' },
  { seq: 7, text: 'emoji 👍🏽 and a\nnewline, "quotes" and \\ backslashes' },
  { seq: 8, text: ' ' },
];

describe('Segments: encode and decode', () => {
  it('gives back every entry and a header naming the conversation, seq range and count', async () => {
    const encoded = await encodeSegment(CONVERSATION, MIXED);
    expect(encoded.header).toEqual({
      conversation: CONVERSATION,
      fromSeq: 3,
      toSeq: 8,
      count: 4,
      codec: 'br',
      checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await decodeSegment(encoded.bytes)).toEqual({ ok: true, header: encoded.header, entries: MIXED });
  });

  it('encodes one entry', async () => {
    const one = [{ seq: 42, text: 'alone' }];
    const encoded = await encodeSegment(CONVERSATION, one);
    expect(await decodeSegment(encoded.bytes)).toEqual({ ok: true, header: { ...encoded.header, fromSeq: 42, toSeq: 42, count: 1 }, entries: one });
  });

  it('refuses no entries, and entries out of seq order', async () => {
    await expect(encodeSegment(CONVERSATION, [])).rejects.toThrow('at least one entry');
    await expect(encodeSegment(CONVERSATION, [MIXED[1]!, MIXED[0]!])).rejects.toThrow('ascending seq order, got seq 3 after 4');
    await expect(encodeSegment(CONVERSATION, [MIXED[0]!, MIXED[0]!])).rejects.toThrow('ascending');
  });

  it('answers the same bytes for the same entries', async () => {
    expect((await encodeSegment(CONVERSATION, MIXED)).bytes).toEqual((await encodeSegment(CONVERSATION, MIXED)).bytes);
  });
});

describe('Segments: corruption', () => {
  it('refuses the segment when any one byte is changed, header or content', async () => {
    const { bytes } = await encodeSegment(CONVERSATION, MIXED);
    const accepted: number[] = [];
    for (let i = 0; i < bytes.length; i++) {
      for (const flip of [0x01, 0x80]) {
        const corrupt = Buffer.from(bytes);
        corrupt[i] = corrupt[i]! ^ flip;
        if ((await decodeSegment(corrupt)).ok) accepted.push(i);
      }
    }
    expect(accepted).toEqual([]);
  });

  it('says what is wrong: marker, header, checksum, truncation', async () => {
    const { bytes } = await encodeSegment(CONVERSATION, MIXED);
    const contentStart = bytes.indexOf(0x0a, 6) + 1;
    const flipped = (at: number) => {
      const copy = Buffer.from(bytes);
      copy[at] = copy[at]! ^ 0x01;
      return copy;
    };
    expect(await decodeSegment(Buffer.from('not a segment'))).toEqual({ ok: false, problem: 'it does not start with the segment marker BSEG1' });
    expect(await decodeSegment(bytes.subarray(0, 20))).toEqual({ ok: false, problem: 'its header has no end' });
    expect(await decodeSegment(flipped(8))).toEqual({ ok: false, problem: 'its header is not a segment header' });
    expect(await decodeSegment(flipped(contentStart + 3))).toEqual({ ok: false, problem: 'its checksum does not match its content' });
    expect(await decodeSegment(bytes.subarray(0, bytes.length - 1))).toEqual({ ok: false, problem: 'its checksum does not match its content' });
    expect(await decodeSegment(new Uint8Array())).toEqual({ ok: false, problem: 'it does not start with the segment marker BSEG1' });
  });
});

describe('Segments: limits', () => {
  it('takes every entry while under both limits', async () => {
    const entries = entriesFrom(1, 10);
    const segment = await encodeWithin(CONVERSATION, entries);
    expect([segment.taken, segment.header.fromSeq, segment.header.toSeq]).toEqual([10, 1, 10]);
  });

  it('takes exactly the message limit, and no more', async () => {
    expect((await encodeWithin(CONVERSATION, entriesFrom(1, SEGMENT_LIMITS.messages))).taken).toBe(1000);
    const segment = await encodeWithin(CONVERSATION, entriesFrom(1, SEGMENT_LIMITS.messages + 1));
    expect([segment.taken, segment.header.toSeq, segment.header.count]).toEqual([1000, 1000, 1000]);
  });

  it('ends a segment at the byte limit, compressed, when that comes first', async () => {
    // Text that does not compress: base64 of random bytes, 1,500 characters a message.
    const noise = () => randomBytes(1125).toString('base64');
    const entries = entriesFrom(1, 400, noise);
    const segment = await encodeWithin(CONVERSATION, entries, { messages: 1000, bytes: 64 * 1024 });
    expect(segment.bytes.length).toBeLessThanOrEqual(64 * 1024);
    expect(segment.taken).toBeGreaterThan(20);
    expect(segment.taken).toBeLessThan(400);
    const decoded = await decodeSegment(segment.bytes);
    expect(decoded.ok && decoded.entries).toEqual(entries.slice(0, segment.taken));
  });

  it('takes one message even when it alone is over the byte limit', async () => {
    const segment = await encodeWithin(CONVERSATION, entriesFrom(1, 3, () => 'x'.repeat(5000)), { messages: 1000, bytes: 10 });
    expect(segment.taken).toBe(1);
  });
});

describe('Durations of archive --older-than', () => {
  it('takes a whole number of seconds, minutes, hours or days', () => {
    expect(['0s', '45s', '90m', '12h', '90d', '36500d'].map((text) => parseDuration('--older-than', text))).toEqual([
      { ok: true, ms: 0 },
      { ok: true, ms: 45_000 },
      { ok: true, ms: 5_400_000 },
      { ok: true, ms: 43_200_000 },
      { ok: true, ms: 7_776_000_000 },
      { ok: true, ms: 3_153_600_000_000 },
    ]);
  });

  it('refuses anything else, naming the option and echoing the value', () => {
    for (const text of ['', '90', 'd', '1.5d', '-1d', '1w', '90 d', '36501d', '1D']) {
      expect(parseDuration('--older-than', text)).toEqual({
        ok: false,
        problem: `--older-than takes a whole number and a unit, s, m, h or d, of at most 36500d (like 0s or 90d), got "${text}".`,
      });
    }
  });
});
