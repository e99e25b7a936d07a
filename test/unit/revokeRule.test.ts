import { describe, expect, it } from 'vitest';
import { decideRevoke, type RevokeFacts } from '../../src/history/revokeRule.ts';

const SENT_AT = Date.UTC(2024, 0, 1, 12, 0, 0);
const WINDOW_SECONDS = 120;
const WINDOW_END = SENT_AT + WINDOW_SECONDS * 1000;
const A_YEAR_LATER = SENT_AT + 365 * 24 * 3600 * 1000;

/** Alice sent the message in a group; each test changes what it is about. */
const facts: RevokeFacts = {
  actorId: 'alice',
  senderId: 'alice',
  actorRole: 'member',
  conversationKind: 'group',
  createdAtMs: SENT_AT,
  nowMs: SENT_AT,
  windowSeconds: WINDOW_SECONDS,
};
const byBob = { actorId: 'bob' } as const;

const allowed = { allowed: true };
const windowPassed = { allowed: false, reason: 'window-passed' };
const notSender = { allowed: false, reason: 'not-sender' };

describe('Revoking in a group: the sender', () => {
  it('allows the sender the instant the message was sent', () => {
    expect(decideRevoke(facts)).toEqual(allowed);
  });

  it('allows the sender 1 ms before the window ends and exactly when it ends', () => {
    expect([decideRevoke({ ...facts, nowMs: WINDOW_END - 1 }), decideRevoke({ ...facts, nowMs: WINDOW_END })]).toEqual([
      allowed,
      allowed,
    ]);
  });

  it('refuses the sender 1 ms after the window ends, and long after', () => {
    expect([decideRevoke({ ...facts, nowMs: WINDOW_END + 1 }), decideRevoke({ ...facts, nowMs: A_YEAR_LATER })]).toEqual([
      windowPassed,
      windowPassed,
    ]);
  });

  it('with a window of 0 seconds, allows the sender only at the instant of sending', () => {
    const noWindow = { ...facts, windowSeconds: 0 };
    expect([decideRevoke(noWindow), decideRevoke({ ...noWindow, nowMs: SENT_AT + 1 })]).toEqual([allowed, windowPassed]);
  });

  it('measures the window in seconds of the configured length', () => {
    const oneSecond = { ...facts, windowSeconds: 1 };
    expect([decideRevoke({ ...oneSecond, nowMs: SENT_AT + 1000 }), decideRevoke({ ...oneSecond, nowMs: SENT_AT + 1001 })]).toEqual([
      allowed,
      windowPassed,
    ]);
  });
});

describe('Revoking in a group: other members and the owner', () => {
  it('refuses a member who did not send the message, even within the window', () => {
    expect(decideRevoke({ ...facts, ...byBob })).toEqual(notSender);
  });

  it('refuses a non-sender member as not-sender, not window-passed, after the window', () => {
    expect(decideRevoke({ ...facts, ...byBob, nowMs: WINDOW_END + 1 })).toEqual(notSender);
  });

  it('allows the owner to revoke another member\'s message at any time', () => {
    const owner = { ...facts, ...byBob, actorRole: 'owner' } as const;
    expect([decideRevoke(owner), decideRevoke({ ...owner, nowMs: WINDOW_END + 1 }), decideRevoke({ ...owner, nowMs: A_YEAR_LATER })]).toEqual([
      allowed,
      allowed,
      allowed,
    ]);
  });

  it('allows the owner to revoke their own message after the window', () => {
    expect(decideRevoke({ ...facts, actorRole: 'owner', nowMs: A_YEAR_LATER })).toEqual(allowed);
  });
});

describe('Revoking in a direct conversation', () => {
  const direct = { ...facts, conversationKind: 'direct' } as const;

  it('allows the sender within the window, up to exactly its end', () => {
    expect([decideRevoke(direct), decideRevoke({ ...direct, nowMs: WINDOW_END })]).toEqual([allowed, allowed]);
  });

  it('refuses the sender 1 ms after the window ends', () => {
    expect(decideRevoke({ ...direct, nowMs: WINDOW_END + 1 })).toEqual(windowPassed);
  });

  it('refuses the other participant, whatever their role', () => {
    expect([
      decideRevoke({ ...direct, ...byBob }),
      decideRevoke({ ...direct, ...byBob, actorRole: 'owner' }),
      decideRevoke({ ...direct, ...byBob, actorRole: 'owner', nowMs: A_YEAR_LATER }),
    ]).toEqual([notSender, notSender, notSender]);
  });

  it('gives a sender with the owner role no time beyond the window', () => {
    expect(decideRevoke({ ...direct, actorRole: 'owner', nowMs: WINDOW_END + 1 })).toEqual(windowPassed);
  });
});
