import { describe, expect, it } from 'vitest';
import { gapsIn, pageSpan, type SpanInput } from '../../src/history/pageSpan.ts';

const page = (over: Partial<SpanInput>): SpanInput => ({
  seqs: [],
  hasPreviousPage: false,
  hasNextPage: false,
  latestSeq: 100,
  from: { kind: 'backward', beforeSeq: null },
  ...over,
});

describe('pageSpan', () => {
  it('spans the newest page from its first edge to latestSeq when older messages remain', () => {
    expect(pageSpan(page({ seqs: [91, 92, 95], hasPreviousPage: true }))).toEqual({ from: 91, to: 100 });
  });

  it('reaches down to seq 1 when nothing older is visible', () => {
    expect(pageSpan(page({ seqs: [40, 41] }))).toEqual({ from: 1, to: 100 });
  });

  it('accounts up to just before a `before` cursor, and after an `after` cursor', () => {
    expect(pageSpan(page({ seqs: [50, 52], hasPreviousPage: true, hasNextPage: true, from: { kind: 'backward', beforeSeq: 60 } }))).toEqual({ from: 50, to: 59 });
    expect(pageSpan(page({ seqs: [50, 52], hasPreviousPage: true, hasNextPage: true, from: { kind: 'forward', afterSeq: 45 } }))).toEqual({ from: 46, to: 52 });
  });

  it('makes the spans of consecutive pages meet with nothing between them', () => {
    const newest = pageSpan(page({ seqs: [95, 97], hasPreviousPage: true }))!;
    const older = pageSpan(page({ seqs: [80, 81], hasPreviousPage: true, hasNextPage: true, from: { kind: 'backward', beforeSeq: 95 } }))!;
    expect(older.to + 1).toBe(newest.from);
    const newer = pageSpan(page({ seqs: [82, 90], hasPreviousPage: true, hasNextPage: true, from: { kind: 'forward', afterSeq: 81 } }))!;
    expect(newer.from).toBe(older.to - (older.to - 81) + 1);
  });

  it('centres an empty jump page on its anchor when both sides have more', () => {
    expect(pageSpan(page({ hasPreviousPage: true, hasNextPage: true, from: { kind: 'around', anchorSeq: 30 } }))).toEqual({ from: 30, to: 30 });
  });

  it('is null when the span is empty: an empty conversation, or nothing past the last cursor', () => {
    expect(pageSpan(page({ latestSeq: 0 }))).toBeNull();
    expect(pageSpan(page({ from: { kind: 'forward', afterSeq: 100 } }))).toBeNull();
  });
});

describe('gapsIn', () => {
  it('lists the seqs of the span that are not on the page as ranges', () => {
    expect(gapsIn({ from: 1, to: 10 }, [3, 4, 7])).toEqual([
      { from: 1, to: 2 },
      { from: 5, to: 6 },
      { from: 8, to: 10 },
    ]);
  });

  it('is empty for a dense page and for no span', () => {
    expect(gapsIn({ from: 3, to: 5 }, [3, 4, 5])).toEqual([]);
    expect(gapsIn(null, [])).toEqual([]);
  });

  it('is the whole span for an empty page', () => {
    expect(gapsIn({ from: 1, to: 59 }, [])).toEqual([{ from: 1, to: 59 }]);
  });
});
