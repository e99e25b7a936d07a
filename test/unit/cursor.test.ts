import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/history/cursor.ts';
import { conversationGlobalId, messageGlobalId } from '../../src/history/globalId.ts';
import { encodeOpaque, scopeTag } from '../../src/history/opaque.ts';

const CONV = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const OTHER_CONV = '7d0e4b21-5a6c-4f3e-8b9a-0c1d2e3f4a5b';
const cursorAt1 = encodeCursor(CONV, 1);
const cursorAt250 = encodeCursor(CONV, 250);

const malformed = { ok: false, problem: 'malformed' };
const otherConversation = { ok: false, problem: 'other-conversation' };

/** `value` with the character at `index` replaced by a different base64url character. */
const editAt = (value: string, index: number) => {
  const replacement = value[index] === 'A' ? 'B' : 'A';
  return `${value.slice(0, index)}${replacement}${value.slice(index + 1)}`;
};

describe('Cursors: encoding', () => {
  it('makes URL-safe cursors', () => {
    expect([cursorAt1, cursorAt250]).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]+$/), expect.stringMatching(/^[A-Za-z0-9_-]+$/)]);
  });

  it('makes one cursor per position and conversation', () => {
    const cursors = [encodeCursor(CONV, 1), encodeCursor(CONV, 2), encodeCursor(CONV, 12), encodeCursor(OTHER_CONV, 1)];
    expect(new Set(cursors).size).toBe(4);
  });

  it('makes the same cursor for the same position every time', () => {
    expect(encodeCursor(CONV, 250)).toBe(cursorAt250);
  });
});

describe('Cursors: size and versions', () => {
  it('names the conversation by its tag, not its uuid, so a cursor is at most 48 characters (86 with the uuid)', () => {
    const longest = encodeCursor(CONV, Number.MAX_SAFE_INTEGER);
    expect(Buffer.from(longest, 'base64url').toString('utf8')).not.toContain(CONV);
    expect(longest.length).toBeLessThanOrEqual(48);
  });

  it('still reads cursors of the previous version, which carried the whole uuid, in their own conversation only', () => {
    const previous = encodeOpaque('c1', [CONV, 250]);
    expect([decodeCursor(CONV, previous), decodeCursor(OTHER_CONV, previous)]).toEqual([{ ok: true, seq: 250 }, otherConversation]);
  });
});

describe('Cursors: decoding in their own conversation', () => {
  it('answers the seq of a cursor at the first message', () => {
    expect(decodeCursor(CONV, cursorAt1)).toEqual({ ok: true, seq: 1 });
  });

  it('answers the seq of a cursor deep in the history', () => {
    expect(decodeCursor(CONV, cursorAt250)).toEqual({ ok: true, seq: 250 });
  });

  it('answers position 0, the place before the first message', () => {
    expect(decodeCursor(CONV, encodeCursor(CONV, 0))).toEqual({ ok: true, seq: 0 });
  });

  it('answers the largest safe seq', () => {
    expect(decodeCursor(CONV, encodeCursor(CONV, Number.MAX_SAFE_INTEGER))).toEqual({
      ok: true,
      seq: Number.MAX_SAFE_INTEGER,
    });
  });
});

describe('Cursors: refusals', () => {
  it('refuses a well-formed cursor from another conversation as other-conversation', () => {
    expect(decodeCursor(CONV, encodeCursor(OTHER_CONV, 1))).toEqual(otherConversation);
  });

  it('refuses text that was never a cursor as malformed', () => {
    const texts = ['', 'abc', 'not a cursor', '!!!!', CONV, '1'];
    expect(texts.map((text) => decodeCursor(CONV, text))).toEqual(texts.map(() => malformed));
  });

  it('refuses a cursor with any one character edited as malformed', () => {
    const decoded = Array.from(cursorAt250, (_, index) => decodeCursor(CONV, editAt(cursorAt250, index)));
    expect(decoded).toEqual(decoded.map(() => malformed));
  });

  it('refuses a cursor cut short, extended or padded as malformed', () => {
    const variants = [cursorAt250.slice(0, -1), cursorAt250.slice(1), `${cursorAt250}A`, `${cursorAt250}=`, ` ${cursorAt250}`];
    expect(variants.map((variant) => decodeCursor(CONV, variant))).toEqual(variants.map(() => malformed));
  });

  it('refuses a global id in place of a cursor as malformed', () => {
    expect([decodeCursor(CONV, conversationGlobalId(CONV)), decodeCursor(CONV, messageGlobalId(CONV, 1))]).toEqual([
      malformed,
      malformed,
    ]);
  });

  it('refuses a negative, fractional or unsafe seq as malformed', () => {
    const seqs = [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN];
    expect(seqs.map((seq) => decodeCursor(CONV, encodeCursor(CONV, seq)))).toEqual(seqs.map(() => malformed));
  });

  it('refuses a checksummed token whose seq is not canonical decimal as malformed', () => {
    const spellings = ['01', '+1', '1e2', ''];
    expect(spellings.map((seq) => decodeCursor(CONV, encodeOpaque('c1', [CONV, seq])))).toEqual(
      spellings.map(() => malformed),
    );
  });

  it('refuses a checksummed token whose conversation is not a tag, or in a previous version\'s cursor not a lower-case UUID, as malformed, before comparing conversations', () => {
    const upper = CONV.toUpperCase();
    expect([
      decodeCursor(CONV, encodeOpaque('c2', [CONV, 1])),
      decodeCursor(CONV, encodeOpaque('c2', [scopeTag(CONV).toUpperCase(), 1])),
      decodeCursor(CONV, encodeOpaque('c2', ['', 1])),
      decodeCursor(upper, encodeOpaque('c1', [upper, 1])),
      decodeCursor(CONV, encodeOpaque('c1', ['general', 1])),
      decodeCursor(CONV, encodeOpaque('c1', [upper, 1])),
    ]).toEqual([malformed, malformed, malformed, malformed, malformed, malformed]);
  });

  it('refuses a checksummed token with a field too many or too few as malformed', () => {
    expect([
      decodeCursor(CONV, encodeOpaque('c1', [CONV, 1, 2])),
      decodeCursor(CONV, encodeOpaque('c1', [CONV])),
      decodeCursor(CONV, encodeOpaque('c2', [CONV, 1])),
    ]).toEqual([malformed, malformed, malformed]);
  });
});
