import { describe, expect, it } from 'vitest';
import { decideEdit, type EditFacts } from '../../src/history/editRule.ts';

const SENT_AT = Date.UTC(2024, 0, 1, 12, 0, 0);
const WINDOW_SECONDS = 900;
const WINDOW_END = SENT_AT + WINDOW_SECONDS * 1000;
const A_CENTURY_LATER = SENT_AT + 100 * 365 * 24 * 3600 * 1000;

/** Alice sent a text message that still has its warm text; each test changes what it is about. */
const facts: EditFacts = {
  actorId: 'alice',
  senderId: 'alice',
  revoked: false,
  erased: false,
  archived: false,
  createdAtMs: SENT_AT,
  nowMs: SENT_AT,
  windowSeconds: WINDOW_SECONDS,
};

const allowed = { allowed: true };
const refused = (reason: string) => ({ allowed: false, reason });

describe('Editing: the sender within the window', () => {
  it('allows the sender the instant the message was sent', () => {
    expect(decideEdit(facts)).toEqual(allowed);
  });

  it('allows the sender 1 ms before the window ends and exactly when it ends', () => {
    expect([decideEdit({ ...facts, nowMs: WINDOW_END - 1 }), decideEdit({ ...facts, nowMs: WINDOW_END })]).toEqual([allowed, allowed]);
  });

  it('refuses the sender 1 ms after the window ends, and long after', () => {
    expect([decideEdit({ ...facts, nowMs: WINDOW_END + 1 }), decideEdit({ ...facts, nowMs: A_CENTURY_LATER })]).toEqual([
      refused('window-passed'),
      refused('window-passed'),
    ]);
  });

  it('measures the window in seconds of the configured length', () => {
    const oneSecond = { ...facts, windowSeconds: 1 };
    expect([decideEdit({ ...oneSecond, nowMs: SENT_AT + 1000 }), decideEdit({ ...oneSecond, nowMs: SENT_AT + 1001 })]).toEqual([
      allowed,
      refused('window-passed'),
    ]);
  });

  it('without a window (null), allows the sender at any time', () => {
    const noWindow = { ...facts, windowSeconds: null };
    expect([SENT_AT, WINDOW_END + 1, A_CENTURY_LATER].map((nowMs) => decideEdit({ ...noWindow, nowMs }))).toEqual([allowed, allowed, allowed]);
  });

  it('allows a clock a little behind the sending instant (never a negative window)', () => {
    expect(decideEdit({ ...facts, nowMs: SENT_AT - 5 })).toEqual(allowed);
  });
});

describe('Editing: each reason to refuse', () => {
  it('refuses anyone but the sender, even at the instant of sending and without a window', () => {
    expect([decideEdit({ ...facts, actorId: 'bob' }), decideEdit({ ...facts, actorId: 'bob', windowSeconds: null })]).toEqual([
      refused('not-sender'),
      refused('not-sender'),
    ]);
  });

  it('tells user ids apart exactly: case and surrounding space count', () => {
    expect([decideEdit({ ...facts, actorId: 'Alice' }), decideEdit({ ...facts, actorId: 'alice ' })]).toEqual([
      refused('not-sender'),
      refused('not-sender'),
    ]);
  });

  it('refuses a revoked message', () => {
    expect(decideEdit({ ...facts, revoked: true })).toEqual(refused('revoked'));
  });

  it('refuses an erased message', () => {
    expect(decideEdit({ ...facts, erased: true })).toEqual(refused('erased'));
  });

  it('refuses a message whose text is in the cold archive', () => {
    expect(decideEdit({ ...facts, archived: true })).toEqual(refused('archived'));
  });
});

describe('Editing: which reason wins when several apply', () => {
  const everything = { ...facts, actorId: 'bob', revoked: true, erased: true, archived: true, nowMs: WINDOW_END + 1 };

  it('says not-sender before anything else, so a non-sender learns nothing about the message', () => {
    expect(decideEdit(everything)).toEqual(refused('not-sender'));
  });

  it('then revoked, erased, window-passed and archived, in that order', () => {
    expect([
      decideEdit({ ...everything, actorId: 'alice' }),
      decideEdit({ ...everything, actorId: 'alice', revoked: false }),
      decideEdit({ ...everything, actorId: 'alice', revoked: false, erased: false }),
      decideEdit({ ...everything, actorId: 'alice', revoked: false, erased: false, nowMs: WINDOW_END }),
    ]).toEqual([refused('revoked'), refused('erased'), refused('window-passed'), refused('archived')]);
  });
});
