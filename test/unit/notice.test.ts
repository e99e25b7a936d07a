import { describe, expect, it } from 'vitest';
import { parseNotice, pingPayload } from '../../src/store/notify.ts';

const UUID = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
/** A payload as PostgreSQL's json_build_object writes it (spaces around the colons). */
const written = (fields: Record<string, unknown>) =>
  `{${Object.entries(fields)
    .map(([k, v]) => `${JSON.stringify(k)} : ${JSON.stringify(v)}`)
    .join(', ')}}`;

describe('parseNotice', () => {
  it('reads each kind as notify.ts writes it', () => {
    expect(
      ['sent', 'revoked', 'purged', 'read', 'member'].map((k) => parseNotice(written({ c: UUID, k, s: 4, t: 6, u: k === 'read' ? 'alice' : null }))),
    ).toEqual([
      { convId: UUID, kind: 'sent', seq: 4, toSeq: 6, userId: null },
      { convId: UUID, kind: 'revoked', seq: 4, toSeq: 6, userId: null },
      { convId: UUID, kind: 'purged', seq: 4, toSeq: 6, userId: null },
      { convId: UUID, kind: 'read', seq: 4, toSeq: 6, userId: 'alice' },
      { convId: UUID, kind: 'member', seq: 4, toSeq: 6, userId: null },
    ]);
  });

  it('keys conversations in lower case, whatever case the writer used', () => {
    expect(parseNotice(written({ c: UUID.toUpperCase(), k: 'sent', s: 1, t: 1, u: null }))).toMatchObject({ convId: UUID });
  });

  it('reads its own liveness probes', () => {
    expect(parseNotice(pingPayload('abc/7'))).toEqual({ kind: 'ping', nonce: 'abc/7' });
  });

  it('answers null for anything that is not one of ours', () => {
    const bad = [
      'not json',
      'null',
      '42',
      '[]',
      written({ k: 'sent', s: 1, t: 1 }),
      written({ c: UUID, k: 'edited', s: 1, t: 1 }),
      written({ c: UUID, k: 'sent', s: -1, t: 1 }),
      written({ c: UUID, k: 'sent', s: 1.5, t: 1 }),
      written({ c: UUID, k: 'sent', s: '1', t: 1 }),
      written({ c: UUID, k: 'read', s: 1, t: 1, u: 7 }),
      written({ k: 'ping' }),
    ];
    expect(bad.map(parseNotice)).toEqual(bad.map(() => null));
  });
});
