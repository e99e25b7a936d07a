import { describe, expect, it } from 'vitest';
import { distinctMentions, MAX_MENTIONED_USERS, mayMentionEveryone } from '../../src/history/mentionRule.ts';

describe('The ids a sender mentions', () => {
  it('keeps each id once, in the order it first appears', () => {
    expect(distinctMentions(['carol', 'bob', 'carol', 'alice', 'bob'])).toEqual(['carol', 'bob', 'alice']);
    expect(distinctMentions([])).toEqual([]);
  });

  it('allows the limit of distinct ids however often they repeat, and refuses one more', () => {
    const ids = Array.from({ length: MAX_MENTIONED_USERS }, (_, i) => `user-${i}`);
    expect(distinctMentions([...ids, ...ids])).toEqual(ids);
    expect(distinctMentions([...ids, 'one-more'])).toBeNull();
  });
});

describe('Who may mention everyone', () => {
  it("allows a group's owner and admins, not its other members", () => {
    expect([
      mayMentionEveryone({ conversationKind: 'group', senderRole: 'owner', admin: false }),
      mayMentionEveryone({ conversationKind: 'group', senderRole: 'member', admin: true }),
      mayMentionEveryone({ conversationKind: 'group', senderRole: 'member', admin: false }),
    ]).toEqual([true, true, false]);
  });

  it('allows no one in a direct conversation, admins included', () => {
    expect([
      mayMentionEveryone({ conversationKind: 'direct', senderRole: 'member', admin: false }),
      mayMentionEveryone({ conversationKind: 'direct', senderRole: 'member', admin: true }),
      mayMentionEveryone({ conversationKind: 'direct', senderRole: 'owner', admin: true }),
    ]).toEqual([false, false, false]);
  });
});
