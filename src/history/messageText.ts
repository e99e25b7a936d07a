/** The rule for a message's text: 1 to 10,000 code points, not only white space. */

export const MAX_TEXT_CODE_POINTS = 10_000;

/** Why `text` cannot be sent, as a sentence, or null when it can. */
export function textProblem(text: string): string | null {
  let codePoints = 0;
  for (const _ of text) {
    codePoints += 1;
    if (codePoints > MAX_TEXT_CODE_POINTS) break;
  }
  if (codePoints === 0) return 'Argument `text` must not be empty.';
  if (codePoints > MAX_TEXT_CODE_POINTS) {
    return `Argument \`text\` must be at most ${MAX_TEXT_CODE_POINTS} characters, got more.`;
  }
  if (text.trim().length === 0) return 'Argument `text` must contain something other than white space.';
  return null;
}
