/**
 * What a user id may be: the token's `sub`, used as it is. 1 to 200
 * characters of well-formed text, so two different ids can never collapse into
 * one when stored (a lone surrogate would become U+FFFD) and no control
 * character can hide in one.
 */
import { isStorable } from './storableText.ts';

export const MAX_USER_ID_LENGTH = 200;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `id` can name a user. */
export function isValidUserId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_USER_ID_LENGTH && isStorable(id) && !CONTROL.test(id);
}
