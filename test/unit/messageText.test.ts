import { describe, expect, it } from 'vitest';
import { MAX_TEXT_CODE_POINTS, textProblem } from '../../src/history/messageText.ts';

const EMPTY = 'Argument `text` must not be empty.';
const TOO_LONG = 'Argument `text` must be at most 10000 characters, got more.';
const BLANK = 'Argument `text` must contain something other than white space.';

const EMOJI = '😀'; // one code point, two UTF-16 code units
const COMBINING_ACUTE = '\u0301';

describe('Message text: length', () => {
  it('allows at most 10,000 code points', () => {
    expect(MAX_TEXT_CODE_POINTS).toBe(10_000);
  });

  it('refuses the empty string', () => {
    expect(textProblem('')).toBe(EMPTY);
  });

  it('accepts one character, one astral character and one combining mark', () => {
    expect([textProblem('a'), textProblem(EMOJI), textProblem(COMBINING_ACUTE)]).toEqual([null, null, null]);
  });

  it('accepts exactly 10,000 ASCII characters and refuses 10,001', () => {
    expect([textProblem('a'.repeat(10_000)), textProblem('a'.repeat(10_001))]).toEqual([null, TOO_LONG]);
  });

  it('counts an emoji as one character: accepts 10,000 emoji (20,000 UTF-16 units) and refuses 10,001', () => {
    const tenThousand = EMOJI.repeat(10_000);
    expect(tenThousand.length).toBe(20_000);
    expect([textProblem(tenThousand), textProblem(EMOJI.repeat(10_001))]).toEqual([null, TOO_LONG]);
  });

  it('accepts 9,999 letters and an emoji, 10,001 UTF-16 units but 10,000 code points', () => {
    expect(textProblem(`${'a'.repeat(9_999)}${EMOJI}`)).toBeNull();
  });

  it('refuses 10,000 letters and an emoji', () => {
    expect(textProblem(`${'a'.repeat(10_000)}${EMOJI}`)).toBe(TOO_LONG);
  });

  it('counts code points, not what a reader sees: a letter with a combining accent is two', () => {
    const accented = `e${COMBINING_ACUTE}`;
    expect([textProblem(accented.repeat(5_000)), textProblem(`${accented.repeat(5_000)}a`)]).toEqual([null, TOO_LONG]);
  });

  it('refuses a text far over the limit', () => {
    expect(textProblem('a'.repeat(1_000_000))).toBe(TOO_LONG);
  });
});

describe('Message text: white space', () => {
  it('refuses ASCII white space alone', () => {
    const blanks = [' ', '   ', '\t', '\n', '\r\n', ' \t\n\v\f '];
    expect(blanks.map(textProblem)).toEqual(blanks.map(() => BLANK));
  });

  it('refuses Unicode spaces alone: ideographic, no-break, em, thin, line and paragraph separators, BOM', () => {
    const blanks = ['\u3000', '\u00a0', '\u2003', '\u2009', '\u202f', '\u205f', '\u1680', '\u2028', '\u2029', '\ufeff', '\u3000 \u00a0\t'];
    expect(blanks.map(textProblem)).toEqual(blanks.map(() => BLANK));
  });

  it('refuses exactly 10,000 spaces as white space', () => {
    expect(textProblem(' '.repeat(10_000))).toBe(BLANK);
  });

  it('accepts text with white space around or inside it', () => {
    const texts = [' a ', '\u3000こんにちは\u3000', 'a\n\nb', `\t${EMOJI}\t`, '.'];
    expect(texts.map(textProblem)).toEqual(texts.map(() => null));
  });

  it('accepts 9,999 spaces and one letter', () => {
    expect(textProblem(`${' '.repeat(9_999)}a`)).toBeNull();
  });
});

describe('Message text: invisible-only text', () => {
  it.each([
    ['NEXT LINE (U+0085), white space that trim() keeps', '\u0085'],
    ['a zero-width space', '\u200b'],
    ['zero-width joiners and a BOM', '\u200d\u200c\ufeff'],
    ['the Mongolian vowel separator', '\u180e'],
  ])('refuses %s', (_what, text) => {
    expect(textProblem(text)).not.toBeNull();
  });

  it('accepts visible text surrounded by invisible characters', () => {
    expect(textProblem('\u200bhi\u0085')).toBeNull();
  });
});
