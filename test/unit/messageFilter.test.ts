import { describe, expect, it } from 'vitest';
import { conversationGlobalId } from '../../src/history/globalId.ts';
import {
  MAX_SENDER_IDS,
  type MessageFilter,
  type MessageFilterArgs,
  messageFilterKey,
  microsecondBound,
  searchScope,
  type SearchScopeArgs,
} from '../../src/history/messageFilter.ts';

const CONV_A = conversationGlobalId('00000000-0000-4000-8000-00000000000a');
const CONV_B = conversationGlobalId('00000000-0000-4000-8000-00000000000b');
const NO_CONDITIONS: MessageFilter = { senderIds: null, sentAfter: null, sentBefore: null, mentionsMe: null, starred: null, pinned: null, hasReplies: null };

/** The problem `args` are refused with, or the scope they make. */
const check = (args: SearchScopeArgs) => {
  const result = searchScope(args);
  return result.ok ? result.scope : result.problem.argumentName;
};
/** A search of words with `filter`. */
const withWords = (filter: MessageFilterArgs) => check({ queryGiven: true, filter });

describe('Search scope: words or a condition', () => {
  it('takes words alone, with no filter or an empty one, over every conversation', () => {
    const scope = { conversationId: null, filter: NO_CONDITIONS };
    expect([check({ queryGiven: true }), check({ queryGiven: true, filter: null }), withWords({})]).toEqual([scope, scope, scope]);
  });

  it('refuses neither words nor a condition, naming `query`', () => {
    const empty = { conversationId: null, senderIds: null, sentAfter: null, sentBefore: null, mentionsMe: null, starred: null, pinned: null, hasReplies: null };
    expect([check({ queryGiven: false }), check({ queryGiven: false, filter: {} }), check({ queryGiven: false, filter: empty })]).toEqual(['query', 'query', 'query']);
  });

  it('takes any one condition without words, false ones and the conversation included', () => {
    const conditions: MessageFilterArgs[] = [
      { conversationId: CONV_A },
      { senderIds: ['bob'] },
      { sentAfter: '2026-01-01T00:00:00Z' },
      { sentBefore: '2026-01-01T00:00:00Z' },
      { mentionsMe: false },
      { starred: false },
      { pinned: true },
      { hasReplies: false },
    ];
    for (const filter of conditions) expect(searchScope({ queryGiven: false, filter }).ok).toBe(true);
    expect(check({ queryGiven: false, conversationId: CONV_A })).toEqual({ conversationId: CONV_A, filter: NO_CONDITIONS });
  });
});

describe('Search scope: the conversation, named one way or both', () => {
  it('takes it from the argument or from the filter alike', () => {
    expect(check({ queryGiven: true, conversationId: CONV_A })).toEqual({ conversationId: CONV_A, filter: NO_CONDITIONS });
    expect(withWords({ conversationId: CONV_A })).toEqual({ conversationId: CONV_A, filter: NO_CONDITIONS });
  });

  it('takes both ways when they agree, an id that is not ours included (the search answers NOT_FOUND for it)', () => {
    expect(check({ queryGiven: true, conversationId: CONV_A, filter: { conversationId: CONV_A } })).toEqual({ conversationId: CONV_A, filter: NO_CONDITIONS });
    expect(check({ queryGiven: true, conversationId: 'nonsense', filter: { conversationId: 'nonsense' } })).toEqual({ conversationId: 'nonsense', filter: NO_CONDITIONS });
  });

  it('refuses two different conversations, or a conversation and an id that is not one, naming `filter.conversationId`', () => {
    expect(check({ queryGiven: true, conversationId: CONV_A, filter: { conversationId: CONV_B } })).toBe('filter.conversationId');
    expect(check({ queryGiven: true, conversationId: CONV_A, filter: { conversationId: 'nonsense' } })).toBe('filter.conversationId');
  });
});

describe('Search scope: senders', () => {
  const ids = (count: number) => Array.from({ length: count }, (_, i) => `user-${i}`);

  it(`takes 1 to ${MAX_SENDER_IDS} ids, distinct and sorted`, () => {
    expect(withWords({ senderIds: ['carol', 'bob', 'carol'] })).toMatchObject({ filter: { senderIds: ['bob', 'carol'] } });
    expect(withWords({ senderIds: ['bob'] })).toMatchObject({ filter: { senderIds: ['bob'] } });
    expect(withWords({ senderIds: ids(MAX_SENDER_IDS) })).toMatchObject({ filter: { senderIds: ids(MAX_SENDER_IDS).sort() } });
  });

  it('refuses an empty list, one id too many and an id no user can have, naming `filter.senderIds`', () => {
    expect([[], ids(MAX_SENDER_IDS + 1), ['bob', ''], ['b\u0000b'], ['x'.repeat(201)]].map((senderIds) => withWords({ senderIds }))).toEqual(
      Array(5).fill('filter.senderIds'),
    );
  });
});

describe('Search scope: times', () => {
  it('keeps whole microseconds as they are, in UTC', () => {
    expect(withWords({ sentAfter: '2026-03-01T10:00:00.123456+02:00', sentBefore: '2026-03-01T09:00:00Z' })).toMatchObject({
      filter: { sentAfter: '2026-03-01T08:00:00.123456Z', sentBefore: '2026-03-01T09:00:00.000000Z' },
    });
  });

  it('refuses sentAfter at or after sentBefore, to the nanosecond, naming `filter.sentBefore`', () => {
    expect(withWords({ sentAfter: '2026-01-01T00:00:00Z', sentBefore: '2026-01-01T00:00:00Z' })).toBe('filter.sentBefore');
    expect(withWords({ sentAfter: '2026-01-01T01:00:00+01:00', sentBefore: '2026-01-01T00:00:00Z' })).toBe('filter.sentBefore');
    expect(withWords({ sentAfter: '2026-01-01T00:00:00.000000002Z', sentBefore: '2026-01-01T00:00:00.000000001Z' })).toBe('filter.sentBefore');
    expect(withWords({ sentAfter: '2026-01-01T00:00:01Z', sentBefore: '2026-01-01T00:00:00Z' })).toBe('filter.sentBefore');
  });

  it('takes sentAfter a nanosecond before sentBefore, though no microsecond lies between them', () => {
    expect(withWords({ sentAfter: '2026-01-01T00:00:00.000000001Z', sentBefore: '2026-01-01T00:00:00.000000002Z' })).toMatchObject({
      filter: { sentAfter: '2026-01-01T00:00:00.000000Z', sentBefore: '2026-01-01T00:00:00.000001Z' },
    });
  });

  it('refuses a time that is not one, naming its field (the DateTime scalar refuses it first)', () => {
    expect(withWords({ sentAfter: '2026-02-30T00:00:00Z' })).toBe('filter.sentAfter');
    expect(withWords({ sentBefore: 'yesterday' })).toBe('filter.sentBefore');
  });
});

describe('Time bounds to the microsecond', () => {
  it('rounds a finer time down for sentAfter and up for sentBefore, so each stays exclusive', () => {
    expect(microsecondBound('2026-01-01T00:00:00.1234561Z', 'down')).toBe('2026-01-01T00:00:00.123456Z');
    expect(microsecondBound('2026-01-01T00:00:00.1234561Z', 'up')).toBe('2026-01-01T00:00:00.123457Z');
  });

  it('leaves a whole microsecond, millisecond or second alone both ways', () => {
    for (const [text, bound] of [
      ['2026-01-01T00:00:00.123456Z', '2026-01-01T00:00:00.123456Z'],
      ['2026-01-01T00:00:00.5Z', '2026-01-01T00:00:00.500000Z'],
      ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000000Z'],
    ]) {
      expect([microsecondBound(text!, 'down'), microsecondBound(text!, 'up')]).toEqual([bound, bound]);
    }
  });

  it('carries a rounding up into the next second, day and year', () => {
    expect(microsecondBound('2025-12-31T23:59:59.9999991Z', 'up')).toBe('2026-01-01T00:00:00.000000Z');
    expect(microsecondBound('2025-12-31T23:59:59.9999991Z', 'down')).toBe('2025-12-31T23:59:59.999999Z');
  });

  it('answers the first and last instants accepted, and the last microsecond for a time rounded past year 9999', () => {
    expect(microsecondBound('0001-01-01T00:00:00Z', 'down')).toBe('0001-01-01T00:00:00.000000Z');
    expect(microsecondBound('1969-12-31T23:59:59.0000001Z', 'up')).toBe('1969-12-31T23:59:59.000001Z');
    expect(microsecondBound('9999-12-31T23:59:59.999999999Z', 'down')).toBe('9999-12-31T23:59:59.999999Z');
    expect(microsecondBound('9999-12-31T23:59:59.999999999Z', 'up')).toBe('9999-12-31T23:59:59.999999Z');
  });

  it('answers null for what parseDateTime refuses', () => {
    expect([microsecondBound('2026-02-30T00:00:00Z', 'down'), microsecondBound('0000-01-01T00:00:00Z', 'up')]).toEqual([null, null]);
  });
});

describe('Filter keys', () => {
  const scopeOf = (filter: MessageFilterArgs) => {
    const result = searchScope({ queryGiven: true, filter });
    if (!result.ok) throw new Error(result.problem.message);
    return result.scope.filter;
  };

  it('is empty with no conditions, so a search of words alone keeps its cursors', () => {
    expect(messageFilterKey(NO_CONDITIONS)).toBe('');
    expect(messageFilterKey(scopeOf({ conversationId: CONV_A }))).toBe('');
  });

  it('is the same for the same senders in another order and the same instant in another zone', () => {
    expect(messageFilterKey(scopeOf({ senderIds: ['b', 'a', 'a'] }))).toBe(messageFilterKey(scopeOf({ senderIds: ['a', 'b'] })));
    expect(messageFilterKey(scopeOf({ sentAfter: '2026-01-01T01:00:00+01:00' }))).toBe(messageFilterKey(scopeOf({ sentAfter: '2026-01-01T00:00:00.000Z' })));
  });

  it('differs for every condition, and for true and false', () => {
    const filters: MessageFilterArgs[] = [
      {},
      { senderIds: ['a'] },
      { senderIds: ['a', 'b'] },
      { sentAfter: '2026-01-01T00:00:00Z' },
      { sentBefore: '2026-01-01T00:00:00Z' },
      ...(['mentionsMe', 'starred', 'pinned', 'hasReplies'] as const).flatMap((name) => [{ [name]: true }, { [name]: false }]),
    ];
    expect(new Set(filters.map((filter) => messageFilterKey(scopeOf(filter)))).size).toBe(filters.length);
  });
});
