/**
 * What a user id may be: the token's `sub`, used as it is. 1 to 200
 * characters of well-formed text, so two different ids can never collapse into
 * one when stored (a lone surrogate would become U+FFFD) and no control
 * character (C0, DEL or C1; PostgreSQL refuses NUL outright) can hide in one.
 * The one rule for every way an id comes in: token `sub`, arguments, cursors
 * and `node(id:)`.
 */
import { isStorable } from './storableText.ts';

export const MAX_USER_ID_LENGTH = 200;

// U+0000-U+001F, U+007F and U+0080-U+009F: Unicode's control characters.
const CONTROL = /\p{Cc}/u;

/** Whether `id` can name a user. */
export function isValidUserId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_USER_ID_LENGTH && isStorable(id) && !CONTROL.test(id);
}
