/**
 * Cutting a page short where some of its messages cannot be shown yet (their
 * archived bodies did not arrive in time, or their segment is unreadable).
 * What stays is contiguous from the side the page was asked from, so the
 * page still ends where its cursor said, its flags say there is more on the
 * cut side, and paging on from the cut retries exactly what was left out.
 * Nothing is shown in place of a message that could not be read.
 */
import type { PageSlice } from './pageSlice.ts';
import type { SeqRange } from './pageSpan.ts';

/** Which end of a page is kept: the newest (newest and backward pages), the oldest (forward pages), or the anchor's (jumps). */
export type KeptEnd = { kind: 'newest' } | { kind: 'oldest' } | { kind: 'around'; anchorSeq: number };

/** Where a page was cut: the seq of the message nearest the kept part that was left out, on each side that was cut. */
export interface PageCut {
  /** Left out on the older side: the page accounts only for seqs above it. */
  older: number | null;
  /** Left out on the newer side: the page accounts only for seqs below it. */
  newer: number | null;
}

/**
 * `slice` (rows ascending) cut before the first row, going outward from
 * `keep`, that is not `readable`; `cut` is null when every row is readable.
 */
export function cutAtUnreadable<Row extends { seq: number }>(
  slice: PageSlice<Row>,
  keep: KeptEnd,
  readable: (row: Row) => boolean,
): { slice: PageSlice<Row>; cut: PageCut | null } {
  const rows = slice.rows;
  // Rows below `split` are the older side, walked downward; the rest the newer side, walked upward.
  const split = keep.kind === 'newest' ? rows.length : keep.kind === 'oldest' ? 0 : firstAtOrAbove(rows, keep.anchorSeq);
  let low = split;
  while (low > 0 && readable(rows[low - 1]!)) low -= 1;
  let high = split;
  while (high < rows.length && readable(rows[high]!)) high += 1;
  const older = low > 0 ? rows[low - 1]!.seq : null;
  const newer = high < rows.length ? rows[high]!.seq : null;
  if (older === null && newer === null) return { slice, cut: null };
  return {
    slice: {
      rows: rows.slice(low, high),
      hasPreviousPage: slice.hasPreviousPage || older !== null,
      hasNextPage: slice.hasNextPage || newer !== null,
    },
    cut: { older, newer },
  };
}

/** The index of the first row at or above `seq` (rows ascending). */
function firstAtOrAbove(rows: readonly { seq: number }[], seq: number): number {
  const index = rows.findIndex((row) => row.seq >= seq);
  return index === -1 ? rows.length : index;
}

/** `span` narrowed to what a cut page accounts for: nothing at or beyond a cut. */
export function spanWithinCut(span: SeqRange | null, cut: PageCut | null): SeqRange | null {
  if (span === null || cut === null) return span;
  const from = cut.older === null ? span.from : Math.max(span.from, cut.older + 1);
  const to = cut.newer === null ? span.to : Math.min(span.to, cut.newer - 1);
  return from <= to ? { from, to } : null;
}
