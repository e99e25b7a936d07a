/**
 * What a user id may be: the token's `sub`, used as it is. 1 to 200
 * characters of well-formed text, so two different ids can never collapse into
 * one when stored (a lone surrogate would become U+FFFD) and no control
 * character can hide in one.
 */
export const MAX_USER_ID_LENGTH = 200;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `id` can name a user. */
export function isValidUserId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_USER_ID_LENGTH && !LONE_SURROGATE.test(id) && !CONTROL.test(id);
}
