import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { decodeAnnouncementCursor, decodeMemberCursor, encodeAnnouncementCursor, encodeMemberCursor } from '../../src/history/listCursors.ts';

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

describe('announcement cursors', () => {
  it('round-trip the id and refuse anything else', () => {
    expect(decodeAnnouncementCursor(encodeAnnouncementCursor(42))).toBe(42);
    expect(decodeAnnouncementCursor(encodeCursor(CONV, 42))).toBeNull();
    expect(decodeAnnouncementCursor('not a cursor')).toBeNull();
  });
});
