import { describe, expect, it } from 'vitest';
import {
  effectivePolicy,
  expiredThroughSeq,
  isExpired,
  KEEP_EVERYTHING,
  MS_PER_DAY,
  policyProblem,
  retentionCutoff,
} from '../../src/history/retention.ts';

const NOW = new Date('2026-11-30T12:00:00.000Z');
const at = (msFromNow: number) => new Date(NOW.getTime() + msFromNow);
const SECOND = 1000;

describe('retention by days', () => {
  const cutoff = retentionCutoff({ days: 7, maxMessages: null }, NOW, 100);

  it('puts the cut-off exactly days × 24 h before now', () => {
    expect(cutoff.expiredBefore).toEqual(at(-7 * MS_PER_DAY));
  });

  it('keeps a message created exactly at the cut-off instant', () => {
    expect(isExpired({ seq: 50, createdAt: at(-7 * MS_PER_DAY) }, cutoff)).toBe(false);
  });

  it('expires a message created one second before the cut-off, and keeps one a second after', () => {
    expect(isExpired({ seq: 50, createdAt: at(-7 * MS_PER_DAY - SECOND) }, cutoff)).toBe(true);
    expect(isExpired({ seq: 50, createdAt: at(-7 * MS_PER_DAY + SECOND) }, cutoff)).toBe(false);
  });

  it('expires one millisecond before the cut-off', () => {
    expect(isExpired({ seq: 50, createdAt: at(-7 * MS_PER_DAY - 1) }, cutoff)).toBe(true);
  });
});

describe('retention by message count (seqs)', () => {
  const expiredSeqs = (maxMessages: number, seqs: number[], maxSeq: number) => {
    const cutoff = retentionCutoff({ days: null, maxMessages }, NOW, maxSeq);
    return seqs.filter((seq) => isExpired({ seq, createdAt: NOW }, cutoff));
  };
  const ten = Array.from({ length: 10 }, (_, i) => i + 1);

  it('keeps everything when maxMessages equals the count', () => {
    expect(expiredSeqs(10, ten, 10)).toEqual([]);
  });

  it('expires the oldest when maxMessages is one under the count', () => {
    expect(expiredSeqs(9, ten, 10)).toEqual([1]);
  });

  it('keeps everything when maxMessages is one over the count', () => {
    expect(expiredSeqs(11, ten, 10)).toEqual([]);
  });

  it('counts seqs, not surviving rows, in a conversation with holes', () => {
    // Seqs 4 and 5 were purged: keeping the newest 8 seqs keeps 3..10, six messages.
    const withHoles = ten.filter((seq) => seq !== 4 && seq !== 5);
    expect(expiredSeqs(8, withHoles, 10)).toEqual([1, 2]);
    expect(retentionCutoff({ days: null, maxMessages: 8 }, NOW, 10).expiredThroughSeqByCount).toBe(2);
  });

  it('expires nothing in an empty conversation', () => {
    expect(retentionCutoff({ days: null, maxMessages: 5 }, NOW, 0).expiredThroughSeqByCount).toBe(0);
  });
});

describe('both rules together', () => {
  const cutoff = retentionCutoff({ days: 1, maxMessages: 3 }, NOW, 10);

  it('expires a message when either rule says so', () => {
    expect(isExpired({ seq: 7, createdAt: NOW }, cutoff)).toBe(true); // too many
    expect(isExpired({ seq: 9, createdAt: at(-2 * MS_PER_DAY) }, cutoff)).toBe(true); // too old
    expect(isExpired({ seq: 9, createdAt: at(-MS_PER_DAY) }, cutoff)).toBe(false); // neither
  });

  it('cuts the history at the higher of the two seqs', () => {
    expect(expiredThroughSeq(cutoff, 5)).toBe(7);
    expect(expiredThroughSeq(cutoff, 9)).toBe(9);
  });

  it('ignores the time rule’s seq when days is not set', () => {
    expect(expiredThroughSeq(retentionCutoff({ days: null, maxMessages: 3 }, NOW, 10), 9)).toBe(7);
  });

  it('expires nothing without a policy', () => {
    const none = retentionCutoff(KEEP_EVERYTHING, NOW, 10);
    expect(isExpired({ seq: 1, createdAt: new Date(0) }, none)).toBe(false);
    expect(expiredThroughSeq(none, 10)).toBe(0);
  });
});

describe('the policy in force', () => {
  it('lets a conversation shorten the server’s limits', () => {
    expect(effectivePolicy({ days: 30, maxMessages: 1000 }, { days: 7, maxMessages: null })).toEqual({ days: 7, maxMessages: 1000 });
  });

  it('never lets a conversation lengthen them', () => {
    expect(effectivePolicy({ days: 30, maxMessages: null }, { days: 90, maxMessages: 50 })).toEqual({ days: 30, maxMessages: 50 });
  });

  it('is the conversation’s own when the server keeps everything', () => {
    expect(effectivePolicy(KEEP_EVERYTHING, { days: 3, maxMessages: null })).toEqual({ days: 3, maxMessages: null });
  });
});

describe('what a conversation may ask for', () => {
  it('refuses non-positive and fractional values, naming the field', () => {
    expect(policyProblem({ days: 0, maxMessages: null }, KEEP_EVERYTHING)?.field).toBe('days');
    expect(policyProblem({ days: -1, maxMessages: null }, KEEP_EVERYTHING)?.field).toBe('days');
    expect(policyProblem({ days: null, maxMessages: 0 }, KEEP_EVERYTHING)?.field).toBe('maxMessages');
    expect(policyProblem({ days: 1.5, maxMessages: null }, KEEP_EVERYTHING)?.field).toBe('days');
  });

  it('refuses a longer limit than the server’s', () => {
    expect(policyProblem({ days: 31, maxMessages: null }, { days: 30, maxMessages: null })).toMatchObject({ field: 'days' });
    expect(policyProblem({ days: 30, maxMessages: null }, { days: 30, maxMessages: null })).toBeNull();
  });

  it('accepts ones, nulls and anything the server has no limit on', () => {
    expect(policyProblem({ days: 1, maxMessages: 1 }, KEEP_EVERYTHING)).toBeNull();
    expect(policyProblem(KEEP_EVERYTHING, { days: 1, maxMessages: 1 })).toBeNull();
  });
});
