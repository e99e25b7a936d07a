import { describe, expect, it } from 'vitest';
import { isValidUserId, MAX_USER_ID_LENGTH } from '../../src/history/userId.ts';

describe('User ids', () => {
  it.each(['a', 'alice', 'user@example.com', 'auth0|5f7c8ec7c33c6c004bbafe82', '张伟', '👩‍💻 dev', 'no\u00a0break', 'x'.repeat(MAX_USER_ID_LENGTH)])(
    'accepts %j',
    (id) => {
      expect(isValidUserId(id)).toBe(true);
    },
  );

  it.each([
    ['the empty string', ''],
    ['one character too many', 'x'.repeat(MAX_USER_ID_LENGTH + 1)],
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate at the end', 'ab\udc00'],
    ['a NUL byte', 'a\u0000b'],
    ['a newline', 'alice\n'],
    ['DEL', 'a\u007f'],
    ['a C1 control character (NEL)', 'a\u0085b'],
    ['the last C1 control character', 'a\u009f'],
  ])('refuses %s', (_what, id) => {
    expect(isValidUserId(id)).toBe(false);
  });
});
