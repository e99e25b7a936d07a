import { describe, expect, it } from 'vitest';
import { LiveSequence } from '../../src/realtime/liveSequence.ts';
import type { LiveHead } from '../../src/store/liveHeads.ts';
import type { Notice } from '../../src/store/notify.ts';

const C = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const GRACE = 1500;
const sent = (seq: number): Notice => ({ convId: C, kind: 'sent', seq, toSeq: seq, userId: null, changeSeq: null });
const revoked = (seq: number, changeSeq: number): Notice => ({ convId: C, kind: 'revoked', seq, toSeq: seq, userId: null, changeSeq });
const purged = (seq: number, toSeq: number, changeSeq: number): Notice => ({ convId: C, kind: 'purged', seq, toSeq, userId: null, changeSeq });
const read = (seq: number): Notice => ({ convId: C, kind: 'read', seq, toSeq: seq, userId: 'alice', changeSeq: null });
const member: Notice = { convId: C, kind: 'member', seq: 0, toSeq: 0, userId: 'bob', changeSeq: null };
const head = (maxSeq: number, changeSeq = 0, announced: number[] = []): LiveHead => ({ convId: C, maxSeq, changeSeq, announced });

/** A sequence started at `maxSeq` (and change number `changeSeq`) at time 0. */
const startedAt = (maxSeq: number, changeSeq = 0) => {
  const sequence = new LiveSequence();
  expect(sequence.observe(head(maxSeq, changeSeq), 0)).toEqual([]);
  return sequence;
};
/** Everything `sequence` delivers as `notices` arrive one by one. */
const deliveredOf = (sequence: LiveSequence, notices: Notice[]) => notices.flatMap((n) => sequence.receive(n));

describe('LiveSequence: order', () => {
  it('delivers sends that arrive in order at once', () => {
    const sequence = startedAt(10);
    expect(deliveredOf(sequence, [sent(11), sent(12), sent(13)])).toEqual([sent(11), sent(12), sent(13)]);
  });

  it('holds a send until the one before it arrives, then delivers both in seq order', () => {
    const sequence = startedAt(10);
    expect(sequence.receive(sent(12))).toEqual([]);
    expect(sequence.receive(sent(13))).toEqual([]);
    expect(sequence.receive(sent(11))).toEqual([sent(11), sent(12), sent(13)]);
  });

  it('holds a revoke, a purge and a read cursor until the send of the newest message they name', () => {
    const sequence = startedAt(10);
    expect(deliveredOf(sequence, [revoked(11, 1), purged(11, 12, 2), read(12)])).toEqual([]);
    expect(sequence.receive(sent(11))).toEqual([sent(11), revoked(11, 1)]);
    expect(sequence.receive(sent(12))).toEqual([sent(12), purged(11, 12, 2), read(12)]);
  });

  it('does not hold a revoke behind later sends (they commute)', () => {
    const sequence = startedAt(10);
    expect(sequence.receive(sent(12))).toEqual([]);
    expect(sequence.receive(revoked(9, 1))).toEqual([revoked(9, 1)]);
  });

  it('delivers membership notices at once', () => {
    const sequence = startedAt(10);
    expect(sequence.receive(sent(12))).toEqual([]);
    expect(sequence.receive(member)).toEqual([member]);
  });

  it('holds everything until its starting point, then delivers what committed before it and holds what is out of turn', () => {
    const sequence = new LiveSequence();
    expect(deliveredOf(sequence, [sent(9), member, sent(12), sent(8), revoked(8, 3)])).toEqual([]);
    expect(sequence.afterChangeSeq).toBeNull();
    expect(sequence.observe(head(10, 3), 0)).toEqual([member, sent(8), sent(9), revoked(8, 3)]);
    expect(sequence.receive(sent(11))).toEqual([sent(11), sent(12)]);
  });

  it('delivers at once a late send from before its starting point', () => {
    const sequence = startedAt(10);
    expect(sequence.receive(sent(10))).toEqual([sent(10)]);
    expect(sequence.receive(sent(11))).toEqual([sent(11)]);
  });
});

describe('LiveSequence: audit', () => {
  it('finds nothing missing when everything the database showed was delivered', () => {
    const sequence = startedAt(10);
    sequence.observe(head(12, 2, [1, 2]), 100);
    deliveredOf(sequence, [sent(11), sent(12), revoked(11, 1), revoked(12, 2)]);
    expect(sequence.audit(100 + GRACE, GRACE)).toBeNull();
    expect(sequence.afterChangeSeq).toBe(2);
  });

  it('says nothing before the grace period has passed', () => {
    const sequence = startedAt(10);
    sequence.observe(head(11), 100);
    expect(sequence.audit(100 + GRACE - 1, GRACE)).toBeNull();
    expect(sequence.audit(100 + GRACE, GRACE)).toMatch(/message 11/);
  });

  it('names a send that never came, even when later ones did', () => {
    const sequence = startedAt(10);
    deliveredOf(sequence, [sent(12), sent(13)]);
    sequence.observe(head(13), 0);
    expect(sequence.audit(GRACE, GRACE)).toMatch(/message 11 was committed and not announced/);
  });

  it('names a revoke or purge entry that never came, and not the feed entries that are never announced (hides, clears)', () => {
    const sequence = startedAt(10, 4);
    // Entries 5 and 7 are hides; 6 and 8 were announced, 8 never arrived.
    sequence.observe(head(10, 8, [6, 8]), 0);
    sequence.receive(revoked(3, 6));
    expect(sequence.audit(GRACE, GRACE)).toMatch(/change 8 was committed and not announced/);
  });

  it('moves its change floor to what it has checked, so the next audit reads only newer entries', () => {
    const sequence = startedAt(10, 4);
    sequence.observe(head(10, 8, [6]), 0);
    sequence.receive(revoked(3, 6));
    expect(sequence.audit(GRACE, GRACE)).toBeNull();
    expect(sequence.afterChangeSeq).toBe(8);
  });

  it('holds the first answer it is owed until it is audited, so a busy conversation is still checked', () => {
    const sequence = startedAt(10);
    sequence.observe(head(11), 0);
    sequence.observe(head(20), 1000);
    deliveredOf(sequence, [sent(11)]);
    expect(sequence.audit(GRACE, GRACE)).toBeNull();
    sequence.observe(head(20), 1000 + GRACE);
    expect(sequence.audit(1000 + 2 * GRACE, GRACE)).toMatch(/message 12/);
  });

  it('gives up at once when too many notices wait for one that does not come', () => {
    const sequence = startedAt(0);
    deliveredOf(sequence, Array.from({ length: 10_001 }, (_, i) => sent(i + 2)));
    expect(sequence.audit(0, GRACE)).toMatch(/10001 notices waited/);
  });

  it('audits nothing before its starting point', () => {
    expect(new LiveSequence().audit(10 * GRACE, GRACE)).toBeNull();
  });
});
