import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { decodeAnnouncementCursor, decodeMemberCursor, encodeAnnouncementCursor, encodeMemberCursor } from '../../src/history/listCursors.ts';
import { encodeOpaque } from '../../src/history/opaque.ts';

const CONV = '0b9b1c4e-2f43-4a57-9d8e-3c1f7a6b5d40';
const OTHER = '1c9b1c4e-2f43-4a57-9d8e-3c1f7a6b5d41';

describe('member cursors', () => {
  it('round-trip the join time and any user id, colons and emoji included', () => {
    for (const userId of ['alice', 'auth0|x:y:z', '用户😀']) {
      const cursor = encodeMemberCursor(CONV, '2026-11-30T12:34:56.789Z', userId);
      expect(decodeMemberCursor(CONV, cursor)).toEqual({ joinedAt: '2026-11-30T12:34:56.789Z', userId });
    }
  });

  it('refuse another conversation’s cursor, an edited one, and other kinds of cursor', () => {
    const cursor = encodeMemberCursor(CONV, '2026-11-30T12:34:56.789Z', 'alice');
    expect(decodeMemberCursor(OTHER, cursor)).toBeNull();
    expect(decodeMemberCursor(CONV, `${cursor.slice(0, -2)}AA`)).toBeNull();
    expect(decodeMemberCursor(CONV, encodeCursor(CONV, 5))).toBeNull();
    expect(decodeMemberCursor(CONV, encodeAnnouncementCursor(5))).toBeNull();
  });
});

describe('member cursors forged with a correct checksum (cursors are not signed)', () => {
  const forged = (convId: string, millis: string | number, userIdField: string) => encodeOpaque('mb1', [convId, millis, userIdField]);
  const userIdField = (userId: string) => Buffer.from(userId, 'utf8').toString('base64url');

  it('accept the first and last join times that Date and PostgreSQL both hold', () => {
    expect([
      decodeMemberCursor(CONV, forged(CONV, 0, userIdField('alice'))),
      decodeMemberCursor(CONV, forged(CONV, 253_402_300_799_999, userIdField('alice'))),
    ]).toEqual([
      { joinedAt: '1970-01-01T00:00:00.000Z', userId: 'alice' },
      { joinedAt: '9999-12-31T23:59:59.999Z', userId: 'alice' },
    ]);
  });

  it.each([
    ['a join time past 9999-12-31', forged(CONV, 253_402_300_800_000, userIdField('alice'))],
    ['a join time past what a Date holds', forged(CONV, '8640000000000001', userIdField('alice'))],
    ['a join time beyond 2^53', forged(CONV, '99999999999999999999', userIdField('alice'))],
    ['a negative join time', forged(CONV, -1, userIdField('alice'))],
    ['an empty user id', forged(CONV, 0, '')],
    ['a user id with a NUL byte', forged(CONV, 0, userIdField('a\u0000b'))],
    ['a user id with a C1 control character', forged(CONV, 0, userIdField('a\u0085b'))],
    ['a user id of 201 characters', forged(CONV, 0, userIdField('x'.repeat(201)))],
    ['a user id whose bytes are not UTF-8', forged(CONV, 0, Buffer.from([0x61, 0xff]).toString('base64url'))],
    ['a user id in another base64 spelling', forged(CONV, 0, `${userIdField('alice')}=`)],
    ['a conversation that is not a uuid', forged('general', 0, userIdField('alice'))],
  ])('refuse %s', (_what, cursor) => {
    expect(decodeMemberCursor(CONV, cursor)).toBeNull();
  });
});

describe('announcement cursors', () => {
  it('round-trip the id and refuse anything else', () => {
    expect(decodeAnnouncementCursor(encodeAnnouncementCursor(42))).toBe(42);
    expect(decodeAnnouncementCursor(encodeCursor(CONV, 42))).toBeNull();
    expect(decodeAnnouncementCursor('not a cursor')).toBeNull();
  });
});
