import { describe, expect, it } from 'vitest';
import { ANONYMOUS, boundedLabels, OTHER } from '../../src/metrics/boundedLabels.ts';

describe('Metrics: bounded label values', () => {
  it('labels a missing or empty name anonymous', () => {
    const label = boundedLabels(2);
    expect([label(null), label(undefined), label('')]).toEqual([ANONYMOUS, ANONYMOUS, ANONYMOUS]);
  });

  it('keeps the first `limit` distinct names, and every later one is other', () => {
    const label = boundedLabels(2);
    expect(['Page', 'Send', 'Page', 'Inbox', 'Send', 'Search'].map(label)).toEqual(['Page', 'Send', 'Page', OTHER, 'Send', OTHER]);
  });

  it('keeps exactly `limit` names, and none with a limit of 0', () => {
    expect(['A', 'B', 'C'].map(boundedLabels(3))).toEqual(['A', 'B', 'C']);
    expect(['A'].map(boundedLabels(0))).toEqual([OTHER]);
  });

  it('counts a value that is not a GraphQL name, or longer than 100 characters, as other without using a place', () => {
    const label = boundedLabels(1);
    expect([label('not a name'), label('1abc'), label(`A${'x'.repeat(100)}`), label('Page')]).toEqual([OTHER, OTHER, OTHER, 'Page']);
    expect(label(`A${'x'.repeat(99)}`)).toBe(OTHER);
  });
});
