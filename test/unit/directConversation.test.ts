import { describe, expect, it } from 'vitest';
import { directConversationId } from '../../src/history/directConversation.ts';
import { isUuid } from '../../src/history/opaque.ts';

/** Version nibble 5, RFC 4122 variant (8, 9, a or b). */
const VERSION_5_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Ids already stored must be found again after any release. Worked out by
 * hand from `printf 'direct:5:alice:3:bob' | sha256sum`
 * (799afe7376d3f123b15f0fba2bc6e99c…): version nibble forced to 5, the
 * variant nibble b stays b.
 */
const ALICE_BOB = '799afe73-76d3-5123-b15f-0fba2bc6e99c';

/** Pairs that would collide under a careless join of the two ids. */
const DISTINCT_PAIRS: [string, string][] = [
  ['alice', 'bob'],
  ['alice', 'carol'],
  ['bob', 'carol'],
  ['alice', 'alice'],
  ['bob', 'bob'],
  ['a:b', 'c'],
  ['a', 'b:c'],
  ['ab', 'c'],
  ['a', 'bc'],
  ['a', '1:b'],
  ['a:1', 'b'],
  ['1:a', '1:b'],
  ['a', ''],
  ['', ''],
  ['alice', 'bob '],
  ['Alice', 'bob'],
  ['émile', 'zoë'],
];

describe('Direct conversation ids', () => {
  it('is the same whichever of the two asks', () => {
    expect(directConversationId('bob', 'alice')).toBe(directConversationId('alice', 'bob'));
  });

  it('is symmetric for every pair, including ids with separators and non-ASCII ids', () => {
    const swappedDiffers = DISTINCT_PAIRS.filter(([a, b]) => directConversationId(a, b) !== directConversationId(b, a));
    expect(swappedDiffers).toEqual([]);
  });

  it('stays the id already stored for a pair', () => {
    expect([directConversationId('alice', 'bob'), directConversationId('bob', 'alice')]).toEqual([ALICE_BOB, ALICE_BOB]);
  });

  it('differs for every distinct pair, including pairs that differ only in where the split falls', () => {
    const ids = DISTINCT_PAIRS.map(([a, b]) => directConversationId(a, b));
    expect(new Set(ids).size).toBe(DISTINCT_PAIRS.length);
  });

  it('keeps ("a:b", "c") and ("a", "b:c") apart', () => {
    expect(directConversationId('a:b', 'c')).not.toBe(directConversationId('a', 'b:c'));
  });

  it('is a lower-case version-5-style UUID that isUuid accepts, for every pair', () => {
    const ids = DISTINCT_PAIRS.map(([a, b]) => directConversationId(a, b));
    expect(ids.filter((id) => !isUuid(id) || !VERSION_5_UUID.test(id))).toEqual([]);
  });

  it('gives a user a conversation with themselves, distinct from any conversation with someone else', () => {
    const self = directConversationId('alice', 'alice');
    expect(self).toMatch(VERSION_5_UUID);
    expect(self).not.toBe(directConversationId('alice', 'bob'));
    expect(self).not.toBe(directConversationId('bob', 'bob'));
  });

  it('handles the longest user ids a token may carry', () => {
    const id = directConversationId('a'.repeat(200), 'b'.repeat(200));
    expect([isUuid(id), id === directConversationId('b'.repeat(200), 'a'.repeat(200))]).toEqual([true, true]);
  });
});
