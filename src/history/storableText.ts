/**
 * Text PostgreSQL can store exactly as given: no NUL (text columns refuse it)
 * and no lone surrogate (UTF-8 would turn it into U+FFFD, so two different
 * inputs could be stored as one, and what is stored would differ from what
 * was sent).
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether `text` would be stored exactly as it is. */
export function isStorable(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** The number of Unicode code points in `text` (what users call characters), counting no further than `stopAt`. */
export function codePointLength(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (const _ of text) {
    count += 1;
    if (count > stopAt) break;
  }
  return count;
}
