import { describe, expect, it } from 'vitest';
import { codePointLength, isStorable } from '../../src/history/storableText.ts';

describe('Storable text', () => {
  it.each(['', 'plain', '漫游 GraphQL', '👩‍💻', 'line\nbreak\ttab'])('stores %j exactly', (text) => {
    expect(isStorable(text)).toBe(true);
  });

  it.each([
    ['a NUL', 'a\u0000b'],
    ['a lone high surrogate', 'x\ud83d'],
    ['a lone low surrogate', '\ude00x'],
    ['surrogates in the wrong order', '\ude00\ud83d'],
  ])('refuses %s', (_what, text) => {
    expect(isStorable(text)).toBe(false);
  });
});

describe('Code point length', () => {
  it('counts an astral character once, though it is two UTF-16 units', () => {
    expect([codePointLength(''), codePointLength('a'), codePointLength('😀'), codePointLength('😀'.repeat(128))]).toEqual([0, 1, 1, 128]);
  });

  it('stops counting one past the limit', () => {
    expect(codePointLength('x'.repeat(1000), 10)).toBe(11);
  });
});
