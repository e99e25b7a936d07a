/**
 * The span of seqs a page accounts for, and the gaps in it: the seqs of the
 * span that are not on the page, which this viewer will never receive (a
 * page scan skips only messages that are purged, expired, hidden for the
 * viewer or cleared). Spans of consecutive pages meet exactly:
 *
 * - A page that reaches the cursor it was asked from accounts up to the
 *   cursor (forward: from `afterSeq + 1`; backward: through `beforeSeq - 1`).
 * - A side with nothing more to see accounts to the end: down to seq 1, or up
 *   to `latestSeq`.
 * - A side with more to see stops at its last edge (or, on an empty jump
 *   page, at the anchor), where the next page's cursor starts.
 */

/** An inclusive range of seqs. */
export interface SeqRange {
  from: number;
  to: number;
}

/** What the span of a page depends on. */
export interface SpanInput {
  /** The page's seqs, ascending. */
  seqs: readonly number[];
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  latestSeq: number;
  /** How the page was asked for. */
  from:
    | { kind: 'forward'; afterSeq: number }
    | { kind: 'backward'; beforeSeq: number | null }
    | { kind: 'around'; anchorSeq: number };
}

/** The span a page accounts for, or null when it is empty. */
export function pageSpan(page: SpanInput): SeqRange | null {
  const first = page.seqs[0];
  const last = page.seqs.at(-1);
  const anchor = page.from.kind === 'around' ? page.from.anchorSeq : undefined;
  let low: number;
  let high: number;
  if (page.from.kind === 'forward') {
    low = page.from.afterSeq + 1;
  } else {
    low = page.hasPreviousPage ? (first ?? anchor ?? 1) : 1;
  }
  if (page.from.kind === 'backward' && page.from.beforeSeq !== null) {
    high = page.from.beforeSeq - 1;
  } else {
    high = page.hasNextPage ? (last ?? anchor ?? page.latestSeq) : page.latestSeq;
  }
  high = Math.min(high, page.latestSeq);
  return low <= high ? { from: low, to: high } : null;
}

/** The seqs of `span` not in `seqs` (ascending, all inside the span), as ascending ranges. */
export function gapsIn(span: SeqRange | null, seqs: readonly number[]): SeqRange[] {
  if (span === null) return [];
  const gaps: SeqRange[] = [];
  let next = span.from;
  for (const seq of seqs) {
    if (seq > next) gaps.push({ from: next, to: seq - 1 });
    next = seq + 1;
  }
  if (next <= span.to) gaps.push({ from: next, to: span.to });
  return gaps;
}
