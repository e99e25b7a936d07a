import { describe, expect, it } from 'vitest';
import { effectivePolicy, KEEP_EVERYTHING, policyProblem } from '../../src/history/retention.ts';

// Where a policy cuts a history is computed in SQL only; its boundaries are
// tested against a real database in test/integration/retentionRule.test.ts.

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
