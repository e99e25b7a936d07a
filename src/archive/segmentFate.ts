/**
 * What becomes of a recorded segment once some of its messages are no
 * longer served: a pure rule, from counts the database answers.
 *
 * A message is live while its index row exists and it is neither revoked
 * nor erased: only then is its archived text ever read. Every live message
 * in a segment's range has its text in the segment (the archiver deleted
 * the range's warm bodies when it recorded the segment, and sends only
 * append above it), and nothing makes a message live again, so
 * `count - live` of the segment's entries are texts no read will serve.
 */

/** A segment's recorded entry count and what its seq range holds now. */
export interface SegmentState {
  /** Entries in the segment (`archive_segments.count`). */
  count: number;
  /** Messages in its range that are live: stored, not revoked, not erased. */
  live: number;
  /** Messages in its range that are revoked or erased (in the segment or not). */
  withdrawn: number;
}

/**
 * `keep`: leave it. `drop`: no live message is left, delete it whole.
 * `rewrite`: write a segment of the live messages only, because texts that
 * must never be served again (revoked, erased) may be in it, or more than
 * half of its entries are no longer served (the trade-off: fewer
 * rewrites for purged texts, which nobody can read anyway).
 */
export type SegmentFate = 'keep' | 'drop' | 'rewrite';

/** The fate of a segment in `state`. */
export function segmentFate(state: SegmentState): SegmentFate {
  if (state.live === 0) return 'drop';
  const stale = state.count - state.live;
  if (stale <= 0) return 'keep';
  // A withdrawn message may predate the segment (revoked before it was
  // archived, so not in it); then the rewrite was not needed, but it costs
  // one segment once: afterwards count equals live and the rule says keep.
  if (state.withdrawn > 0 || stale * 2 > state.count) return 'rewrite';
  return 'keep';
}
