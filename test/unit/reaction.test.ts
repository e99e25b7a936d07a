import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalReaction, isEmoji, MAX_REACTIONS_PER_MESSAGE, reactionProblem } from '../../src/history/reaction.ts';

const RGI_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');
const SKIN_TONES = ['\u{1f3fb}', '\u{1f3fc}', '\u{1f3fd}', '\u{1f3fe}', '\u{1f3ff}'];

/**
 * RGI emoji of every kind, found by asking the engine's own `\p{RGI_Emoji}`:
 * each code point alone or with its emoji presentation selector, keycaps,
 * every flag, every skin-tone sequence, and some ZWJ and tag sequences
 * (those cannot be enumerated from code points). A bare skin-tone modifier
 * is an RGI emoji too, but after a modifier base it joins it into one
 * (👍 then 🏽 is 👍🏽), so it is left out of the pool the properties
 * concatenate from.
 */
const POOL = (() => {
  const found = new Set<string>();
  const single: string[] = [];
  for (let cp = 0; cp <= 0x1faff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const char = String.fromCodePoint(cp);
    const spelled = RGI_EMOJI.test(char) ? char : RGI_EMOJI.test(`${char}\ufe0f`) ? `${char}\ufe0f` : null;
    if (spelled !== null) single.push(spelled);
  }
  const regional = Array.from({ length: 26 }, (_, i) => String.fromCodePoint(0x1f1e6 + i));
  const candidates = [
    ...single.filter((emoji) => !SKIN_TONES.includes(emoji)),
    ...[...'#*0123456789'].map((key) => `${key}\ufe0f\u20e3`),
    ...regional.flatMap((a) => regional.map((b) => a + b)),
    ...single.flatMap((base) => SKIN_TONES.map((tone) => base.replace('\ufe0f', '') + tone)),
    '👨‍👩‍👧‍👦', '👩‍❤️‍👨', '🏳️‍🌈', '🏴‍☠️', '🧑🏽‍💻', '👨🏿‍🦰', '🐻‍❄️', '❤️‍🔥',
    '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}',
  ];
  for (const emoji of candidates) if (RGI_EMOJI.test(emoji)) found.add(emoji);
  return [...found];
})();

const ACCEPTED = ['👍', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '❤', '❤️', ':+1:', ':party_parrot:'];
const REFUSED: [string, string][] = [
  ['the empty string', ''],
  ['a letter', 'a'],
  ['two emoji', '👍👍'],
  ['a shortcode in upper case', ':UPPER:'],
  ['a shortcode with an empty name', '::'],
  ['a shortcode of 33 characters', `:${'a'.repeat(33)}:`],
  ['an emoji and a space', '👍 '],
  ['a space and an emoji', ' 👍'],
  ['plain text', 'nice one'],
  ['a word in shortcode colons with a space', ':thumbs up:'],
  ['a shortcode without its closing colon', ':smile'],
  ['a shortcode with a trailing newline', ':smile:\n'],
  ['a digit alone (a keycap needs its U+20E3)', '1'],
  ['a single regional indicator (half a flag)', '\u{1f1eb}'],
  ['a ZWJ alone', '\u200d'],
  ['a presentation selector alone', '\ufe0f'],
  ['an emoji with a NUL after it', '👍\u0000'],
  ['a lone surrogate', '\ud83d'],
];

/** The refusal, which ends by quoting what was sent. */
const refusedMessage = /^Argument `reaction` must be one emoji or a shortcode `:name:` of 1 to 32 lower-case letters, digits, `_`, `\+` or `-`, got ".*"\.$/s;

describe('Reactions: one spelling per reaction', () => {
  it('stores an emoji written without its presentation selector as the emoji, so ❤ and ❤️ are one reaction', () => {
    expect([canonicalReaction('❤'), canonicalReaction('❤️')]).toEqual(['❤️', '❤️']);
  });

  it('keeps RGI emoji and shortcodes exactly as given, and answers null for what is refused', () => {
    expect(['👍🏽', '🇫🇷', ':+1:', '👍👍', 'a'].map(canonicalReaction)).toEqual(['👍🏽', '🇫🇷', ':+1:', null, null]);
  });
});

describe('Reactions: what is accepted', () => {
  it.each(ACCEPTED)('accepts %j', (reaction) => {
    expect(reactionProblem(reaction)).toBeNull();
  });

  it('accepts shortcodes of 1 and of 32 characters, using every allowed character', () => {
    expect([':a:', `:${'z'.repeat(32)}:`, ':a-b_c+1:', ':-:', ':+:'].map(reactionProblem)).toEqual([null, null, null, null, null]);
  });

  it('finds thousands of RGI emoji of every kind to check against', () => {
    expect(POOL.length).toBeGreaterThan(2000);
    expect(POOL).toEqual(expect.arrayContaining(['👍', '👍🏽', '🇫🇷', '#️⃣', '👨‍👩‍👧‍👦', '❤️']));
  });

  it('accepts every RGI emoji of the pool as one emoji', () => {
    const refused = POOL.filter((emoji) => !isEmoji(emoji) || reactionProblem(emoji) !== null);
    expect(refused).toEqual([]);
  });

  it('accepts any `:name:` of the grammar (1 to 32 of a-z, 0-9, _, + and -)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^:[a-z0-9_+-]{1,32}:$/), (shortcode) => {
        expect(reactionProblem(shortcode)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });
});

describe('Reactions: what is refused', () => {
  it.each(REFUSED)('refuses %s, naming the argument and the rule', (_what, reaction) => {
    expect(reactionProblem(reaction)).toMatch(refusedMessage);
  });

  it('refuses any string of two or more RGI emoji', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...POOL), { minLength: 2, maxLength: 6 }), (emoji) => {
        expect({ emoji, problem: reactionProblem(emoji.join('')) }).toEqual({ emoji, problem: expect.stringMatching(refusedMessage) });
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses any `:name:` longer than 32 characters or holding a character outside the grammar', () => {
    const tooLong = fc.stringMatching(/^[a-z0-9_+-]{33,60}$/);
    const outsider = fc
      .tuple(fc.stringMatching(/^[a-z0-9_+-]{0,15}$/), fc.string({ minLength: 1, maxLength: 1 }), fc.stringMatching(/^[a-z0-9_+-]{0,15}$/))
      .filter(([, char]) => !/^[a-z0-9_+-]$/.test(char))
      .map(([before, char, after]) => before + char + after);
    fc.assert(
      fc.property(fc.oneof(tooLong, outsider), (name) => {
        expect({ name, problem: reactionProblem(`:${name}:`) }).toEqual({ name, problem: expect.stringMatching(refusedMessage) });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses an RGI emoji with anything that is not part of it before or after', () => {
    fc.assert(
      fc.property(fc.constantFrom(...POOL), fc.constantFrom(' ', 'a', ':', '\n', '\u0000', 'x'), fc.boolean(), (emoji, extra, before) => {
        const reaction = before ? extra + emoji : emoji + extra;
        expect({ reaction, problem: reactionProblem(reaction) }).toEqual({ reaction, problem: expect.stringMatching(refusedMessage) });
      }),
      { numRuns: 500 },
    );
  });
});

describe('Reactions: the limit per message', () => {
  it('is 20 distinct reactions, as the schema says', () => {
    expect(MAX_REACTIONS_PER_MESSAGE).toBe(20);
  });
});
