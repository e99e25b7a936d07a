import { describe, expect, it } from 'vitest';
import { decidePin, MAX_PINS_PER_CONVERSATION, type PinFacts } from '../../src/history/pinRule.ts';

const member: PinFacts = {
  actorRole: 'member',
  admin: false,
  conversationKind: 'group',
  membersMayPin: false,
  pin: true,
  revoked: false,
  alreadyPinned: false,
  pinnedCount: 0,
};

describe('Who may pin', () => {
  it('refuses a plain member of a group that does not let members pin, both ways', () => {
    expect([decidePin(member), decidePin({ ...member, pin: false, alreadyPinned: true })]).toEqual([
      { allowed: false, reason: 'not-allowed' },
      { allowed: false, reason: 'not-allowed' },
    ]);
  });

  it('allows the owner, an admin, every member when the group lets them, and both sides of a direct conversation', () => {
    const cases: Partial<PinFacts>[] = [{ actorRole: 'owner' }, { admin: true }, { membersMayPin: true }, { conversationKind: 'direct' }];
    expect(cases.map((change) => decidePin({ ...member, ...change }))).toEqual(cases.map(() => ({ allowed: true, changes: true })));
  });
});

describe('What a pin changes', () => {
  const owner = { ...member, actorRole: 'owner' as const };

  it('changes nothing to pin a pinned message or unpin one that is not, even revoked or at the limit', () => {
    expect(decidePin({ ...owner, alreadyPinned: true, pinnedCount: MAX_PINS_PER_CONVERSATION })).toEqual({ allowed: true, changes: false });
    expect(decidePin({ ...owner, pin: false, revoked: true })).toEqual({ allowed: true, changes: false });
    expect(decidePin({ ...owner, pin: false, alreadyPinned: true, pinnedCount: MAX_PINS_PER_CONVERSATION })).toEqual({ allowed: true, changes: true });
  });

  it('refuses a revoked message and a pin past the limit, and allows the last one under it', () => {
    expect(decidePin({ ...owner, revoked: true })).toEqual({ allowed: false, reason: 'revoked' });
    expect(decidePin({ ...owner, pinnedCount: MAX_PINS_PER_CONVERSATION })).toEqual({ allowed: false, reason: 'too-many' });
    expect(decidePin({ ...owner, pinnedCount: MAX_PINS_PER_CONVERSATION - 1 })).toEqual({ allowed: true, changes: true });
  });
});
