/**
 * What a reaction may be: one emoji, or a `:shortcode:`. Pure: no I/O.
 *
 * "One emoji" is one grapheme cluster that Unicode lists as an emoji
 * (`\p{RGI_Emoji}`: skin tones, ZWJ families, flags and keycaps included),
 * or one emoji character written without its emoji presentation selector
 * (`❤` for `❤️`), as keyboards often send it.
 */

/** The most distinct reactions one message holds. */
export const MAX_REACTIONS_PER_MESSAGE = 20;

const SHORTCODE = /^:[a-z0-9_+-]{1,32}:$/;
// Built at run time: the `v` flag is newer than the compiler's target.
const RGI_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Whether `value` is a single grapheme cluster. */
function isOneGrapheme(value: string): boolean {
  const iterator = segmenter.segment(value)[Symbol.iterator]();
  const first = iterator.next();
  return !first.done && first.value.segment === value;
}

/** `value` as the one emoji it is, in its emoji presentation (`❤` as `❤️`), or null when it is not exactly one emoji. */
function canonicalEmoji(value: string): string | null {
  if (value.length === 0 || value.length > 64 || !isOneGrapheme(value)) return null;
  if (RGI_EMOJI.test(value)) return value;
  return !value.includes('\ufe0f') && RGI_EMOJI.test(`${value}\ufe0f`) ? `${value}\ufe0f` : null;
}

/** Whether `value` is exactly one emoji. */
export function isEmoji(value: string): boolean {
  return canonicalEmoji(value) !== null;
}

/**
 * The reaction `value` is stored and counted as: a shortcode as given, an
 * emoji in its emoji presentation, so `❤` and `❤️` are one reaction, not
 * two; null when `value` is not a reaction.
 */
export function canonicalReaction(value: string): string | null {
  return SHORTCODE.test(value) ? value : canonicalEmoji(value);
}

/** Why `value` cannot be a reaction, as a sentence, or null when it can. */
export function reactionProblem(value: string): string | null {
  if (canonicalReaction(value) !== null) return null;
  const shown = JSON.stringify([...value].slice(0, 40).join(''));
  return `Argument \`reaction\` must be one emoji or a shortcode \`:name:\` of 1 to 32 lower-case letters, digits, \`_\`, \`+\` or \`-\`, got ${shown}.`;
}
