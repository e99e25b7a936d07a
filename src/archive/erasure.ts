/**
 * An erasure's texts leave the archive as soon as the erasure commits: the
 * objects of segments it left with no live message are deleted (their
 * records went in its transaction), and every other segment overlapping
 * what it erased is rewritten without the erased texts (rewrite.ts), so an
 * `eraseUser` that answered has left none of them in the store. Whatever
 * this cannot do (the store is down, the process dies) the archiver's next
 * run does: its reconciliation and its cleanup of unrecorded objects work
 * from what is stored, not from a record of erasures.
 */
import type { SqlRunner } from '../db/runner.ts';
import type { SeqRange } from './emptySegments.ts';
import { reconcileSegmentsIn, type ReconcileSummary } from './rewrite.ts';
import type { SegmentStore } from './segmentStore.ts';

/** Deletes `unrecorded` (object keys whose records the erasure deleted) and rewrites the segments overlapping `erased`. */
export async function withdrawErasedTexts(db: SqlRunner, store: SegmentStore, erased: readonly SeqRange[], unrecorded: readonly string[]): Promise<ReconcileSummary> {
  for (const key of unrecorded) await store.delete(key);
  return reconcileSegmentsIn(db, store, erased);
}
