/** The rule for a message's text: 1 to 10,000 code points, storable, not only white space. */
import { codePointLength, isStorable } from './storableText.ts';

export const MAX_TEXT_CODE_POINTS = 10_000;

/**
 * White space as Unicode defines it (JavaScript's `\s` misses U+0085) and the
 * zero-width characters that render as nothing.
 */
const INVISIBLE_ONLY = /^[\s\u0085\u180e\u200b-\u200d\u2060\ufeff]*$/u;

/** Why `text` cannot be sent, as a sentence, or null when it can. */
export function textProblem(text: string): string | null {
  const codePoints = codePointLength(text, MAX_TEXT_CODE_POINTS);
  if (codePoints === 0) return 'Argument `text` must not be empty.';
  if (codePoints > MAX_TEXT_CODE_POINTS) {
    return `Argument \`text\` must be at most ${MAX_TEXT_CODE_POINTS} characters, got more.`;
  }
  if (!isStorable(text)) return 'Argument `text` must not contain NUL characters or unpaired surrogates.';
  if (INVISIBLE_ONLY.test(text)) return 'Argument `text` must contain something other than white space.';
  return null;
}
