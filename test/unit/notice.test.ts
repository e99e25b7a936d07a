import { describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES, type Notice, type NoticeKind, noticePayloads, parsePayload, pingPayload } from '../../src/store/notify.ts';

const UUID = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const notice = (kind: NoticeKind, seq: number, extra: Partial<Notice> = {}): Notice => ({
  convId: UUID,
  kind,
  seq,
  toSeq: seq,
  userId: null,
  changeSeq: null,
  ...extra,
});
/** A payload written by hand, one compact notice per entry. */
const written = (...entries: Record<string, unknown>[]) => JSON.stringify(entries);

describe('noticePayloads and parsePayload', () => {
  it('reads back every kind as it was written, in order', () => {
    const notices = [
      notice('sent', 4),
      notice('revoked', 4, { changeSeq: 9 }),
      notice('purged', 4, { toSeq: 6, changeSeq: 10 }),
      notice('read', 4, { userId: 'alice' }),
      notice('member', 0, { userId: 'bob' }),
    ];
    expect(noticePayloads(notices).map(parsePayload)).toEqual([notices]);
  });

  it('writes nothing for no notices', () => {
    expect(noticePayloads([])).toEqual([]);
  });

  it('splits a batch into payloads under PostgreSQL’s 8,000-byte limit, keeping the order', () => {
    const notices = Array.from({ length: 500 }, (_, i) => notice('read', i + 1, { userId: `user-${'é'.repeat(40)}-${i}` }));
    const payloads = noticePayloads(notices);
    expect(payloads.length).toBeGreaterThan(1);
    expect(Math.max(...payloads.map((p) => Buffer.byteLength(p)))).toBeLessThan(8000);
    expect(payloads.flatMap((p) => parsePayload(p) as Notice[])).toEqual(notices);
  });

  it('fills a payload up to the limit exactly, and starts the next with the notice that does not fit', () => {
    const one = noticePayloads([notice('sent', 1)])[0]!;
    const size = Buffer.byteLength(one) - 2;
    // n items take 2 + n * size + (n - 1) bytes: the largest n that leaves room for the envelope under 8,000 bytes.
    expect(MAX_PAYLOAD_BYTES + '{"p":"FFFFFFFF/FFFFFFFF","e":}'.length).toBeLessThan(8000);
    const fit = Math.floor((MAX_PAYLOAD_BYTES - 2 + 1) / (size + 1));
    const notices = Array.from({ length: fit + 1 }, () => notice('sent', 1));
    expect(noticePayloads(notices).map((p) => (parsePayload(p) as Notice[]).length)).toEqual([fit, 1]);
  });

  it('keys conversations in lower case, whatever case the writer used', () => {
    expect(parsePayload(written({ c: UUID.toUpperCase(), k: 'sent', s: 1, t: 1, u: null, h: null }))).toEqual([notice('sent', 1)]);
  });

  it('gives each notice of an enveloped payload the WAL position it was announced at', () => {
    const payload = `{"p":"16/B374D848","e":${noticePayloads([notice('sent', 1), notice('read', 1, { userId: 'bob' })])[0]}}`;
    expect(parsePayload(payload)).toEqual([
      { ...notice('sent', 1), position: '16/B374D848' },
      { ...notice('read', 1, { userId: 'bob' }), position: '16/B374D848' },
    ]);
  });

  it('answers null for an envelope without its position or with a bad notice', () => {
    const good = { c: UUID, k: 'sent', s: 1, t: 1, u: null, h: null };
    expect([JSON.stringify({ e: [good] }), JSON.stringify({ p: '0/1', e: [good, { k: 'sent' }] }), JSON.stringify({ p: '0/1', e: [] })].map(parsePayload)).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('reads its own liveness probes', () => {
    expect(parsePayload(pingPayload('abc/7'))).toEqual({ kind: 'ping', nonce: 'abc/7' });
  });

  it('answers null for anything that is not one of ours, and for a batch with one bad notice', () => {
    const good = { c: UUID, k: 'sent', s: 1, t: 1, u: null, h: null };
    const bad = [
      'not json',
      'null',
      '42',
      '[]',
      '{}',
      written({ k: 'sent', s: 1, t: 1 }),
      written({ c: UUID, k: 'exploded', s: 1, t: 1 }),
      written({ c: UUID, k: 'sent', s: -1, t: 1 }),
      written({ c: UUID, k: 'sent', s: 1.5, t: 1 }),
      written({ c: UUID, k: 'sent', s: '1', t: 1 }),
      written({ c: UUID, k: 'read', s: 1, t: 1, u: 7 }),
      written({ c: UUID, k: 'revoked', s: 1, t: 1, h: 'one' }),
      written(good, { c: UUID, k: 'sent' }),
      JSON.stringify({ k: 'ping' }),
      JSON.stringify(good),
    ];
    expect(bad.map(parsePayload)).toEqual(bad.map(() => null));
  });
});
