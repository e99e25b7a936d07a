import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { conversationGlobalId } from '../../src/history/globalId.ts';
import { decodeInboxCursor, encodeInboxCursor } from '../../src/history/inboxCursor.ts';
import { encodeOpaque } from '../../src/history/opaque.ts';

const CONV = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const OTHER_CONV = '7d0e4b21-5a6c-4f3e-8b9a-0c1d2e3f4a5b';
/** 2026-11-30T13:10:23.123456Z in microseconds. */
const NOW_MICROS = 1_796_044_223_123_456;
const position = { activityMicros: NOW_MICROS, convId: CONV };
const cursor = encodeInboxCursor(position);

/** `value` with the character at `index` replaced by a different base64url character. */
const editAt = (value: string, index: number) => {
  const replacement = value[index] === 'A' ? 'B' : 'A';
  return `${value.slice(0, index)}${replacement}${value.slice(index + 1)}`;
};

describe('Inbox cursors: encoding', () => {
  it('makes URL-safe cursors', () => {
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('makes one cursor per position: activity a microsecond apart, or another conversation, differ', () => {
    const cursors = [
      cursor,
      encodeInboxCursor({ activityMicros: NOW_MICROS + 1, convId: CONV }),
      encodeInboxCursor({ activityMicros: NOW_MICROS, convId: OTHER_CONV }),
    ];
    expect(new Set(cursors).size).toBe(3);
  });

  it('makes the same cursor for the same position every time', () => {
    expect(encodeInboxCursor({ ...position })).toBe(cursor);
  });
});

describe('Inbox cursors: decoding', () => {
  it('answers the position a cursor was made from, to the microsecond', () => {
    expect(decodeInboxCursor(cursor)).toEqual(position);
  });

  it('answers the epoch itself and the largest safe activity', () => {
    for (const activityMicros of [0, Number.MAX_SAFE_INTEGER]) {
      expect(decodeInboxCursor(encodeInboxCursor({ activityMicros, convId: CONV }))).toEqual({ activityMicros, convId: CONV });
    }
  });
});

describe('Inbox cursors: refusals', () => {
  it('refuses the empty string and text that is not base64url', () => {
    expect([decodeInboxCursor(''), decodeInboxCursor('not a cursor!'), decodeInboxCursor('x'.repeat(300))]).toEqual([null, null, null]);
  });

  it('refuses every single-character edit of a real cursor', () => {
    const decoded = Array.from({ length: cursor.length }, (_, i) => decodeInboxCursor(editAt(cursor, i)));
    expect(decoded.filter((d) => d !== null)).toEqual([]);
  });

  it('refuses a cursor cut short', () => {
    expect(decodeInboxCursor(cursor.slice(0, -1))).toBeNull();
  });

  it('refuses the other kinds of token: page cursors and conversation ids', () => {
    expect([decodeInboxCursor(encodeCursor(CONV, 5)), decodeInboxCursor(conversationGlobalId(CONV))]).toEqual([null, null]);
  });

  it('refuses well-checksummed tokens around a bad activity or a bad conversation id', () => {
    const made = [
      encodeOpaque('i1', [-1, CONV]),
      encodeOpaque('i1', ['1.5', CONV]),
      encodeOpaque('i1', ['007', CONV]),
      encodeOpaque('i1', [Number.MAX_SAFE_INTEGER + 2, CONV]),
      encodeOpaque('i1', [NOW_MICROS, 'not-a-uuid']),
      encodeOpaque('i1', [NOW_MICROS, CONV.toUpperCase()]),
      encodeOpaque('i1', [CONV, NOW_MICROS]),
      encodeOpaque('i1', [NOW_MICROS]),
      encodeOpaque('i1', [NOW_MICROS, CONV, 'extra']),
    ];
    expect(made.map(decodeInboxCursor)).toEqual(made.map(() => null));
  });
});
