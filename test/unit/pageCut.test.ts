import { describe, expect, it } from 'vitest';
import { cutAtUnreadable, spanWithinCut } from '../../src/history/pageCut.ts';
import type { PageSlice } from '../../src/history/pageSlice.ts';

const rows = (...seqs: number[]) => seqs.map((seq) => ({ seq }));
const slice = (seqs: number[], hasPreviousPage = false, hasNextPage = false): PageSlice<{ seq: number }> => ({
  rows: rows(...seqs),
  hasPreviousPage,
  hasNextPage,
});
const readableExcept = (...unreadable: number[]) => (row: { seq: number }) => !unreadable.includes(row.seq);

describe('Cutting a page where its messages cannot be read', () => {
  it('leaves a page whose every row is readable as it was', () => {
    const page = slice([3, 4, 5], true, false);
    expect(cutAtUnreadable(page, { kind: 'newest' }, () => true)).toEqual({ slice: page, cut: null });
  });

  it('keeps the newest end of a newest or backward page, down to the first unreadable row', () => {
    expect(cutAtUnreadable(slice([3, 4, 6, 7, 8]), { kind: 'newest' }, readableExcept(4, 6))).toEqual({
      slice: slice([7, 8], true, false),
      cut: { older: 6, newer: null },
    });
  });

  it('keeps the oldest end of a forward page, up to the first unreadable row, and keeps a flag already true', () => {
    expect(cutAtUnreadable(slice([3, 4, 6, 7], true, false), { kind: 'oldest' }, readableExcept(6))).toEqual({
      slice: slice([3, 4], true, true),
      cut: { older: null, newer: 6 },
    });
  });

  it('keeps what is contiguous with a jump anchor on both sides', () => {
    expect(cutAtUnreadable(slice([1, 2, 3, 4, 5, 6, 7]), { kind: 'around', anchorSeq: 4 }, readableExcept(2, 6))).toEqual({
      slice: slice([3, 4, 5], true, true),
      cut: { older: 2, newer: 6 },
    });
  });

  it('leaves out an unreadable anchor and what lies beyond it on the newer side, keeping the older side', () => {
    expect(cutAtUnreadable(slice([2, 3, 4, 5]), { kind: 'around', anchorSeq: 4 }, readableExcept(4))).toEqual({
      slice: slice([2, 3], false, true),
      cut: { older: null, newer: 4 },
    });
  });

  it('can leave a page empty, cut at the row nearest the kept end', () => {
    expect(cutAtUnreadable(slice([5, 6]), { kind: 'newest' }, readableExcept(6))).toEqual({
      slice: slice([], true, false),
      cut: { older: 6, newer: null },
    });
  });

  it('narrows a span to what lies strictly between the cuts', () => {
    expect(spanWithinCut({ from: 1, to: 20 }, { older: 6, newer: null })).toEqual({ from: 7, to: 20 });
    expect(spanWithinCut({ from: 1, to: 20 }, { older: null, newer: 9 })).toEqual({ from: 1, to: 8 });
    expect(spanWithinCut({ from: 10, to: 20 }, { older: 6, newer: 30 })).toEqual({ from: 10, to: 20 });
    expect(spanWithinCut({ from: 1, to: 6 }, { older: 6, newer: null })).toBeNull();
    expect(spanWithinCut(null, { older: 6, newer: null })).toBeNull();
    expect(spanWithinCut({ from: 1, to: 6 }, null)).toEqual({ from: 1, to: 6 });
  });
});
