/**
 * Read receipts a page loaded for all its messages at once, each kept by
 * its row, as warm texts are (warmTexts.ts): `Message.readCount` of that
 * row then answers at once. Through the loader, each of a page's 50 edges
 * waited on a promise of its own and graphql-jit finished each one in a
 * later microtask; the page asking for `readCount` served at about half
 * the rate of the page without it, in a group of 10 as in one of 10,000.
 *
 * A message page or a thread's replies that ask for `readCount` have
 * their statement count them (src/store/pageReceipts.ts) and hand them to
 * their rows here; other connections (search, and a selection a directive
 * makes unsure) load them in one batch when their edges are resolved.
 */
import type { MessageRow } from '../store/rows.ts';
import type { Loaders } from './loaders.ts';
import { selectsOnce } from './selection.ts';

const READ_COUNT = Symbol('readCount');

/** A row that may carry its read count. */
type CarryingRow = MessageRow & { [READ_COUNT]?: number };

/** Whether a message connection's edges ask each node for `readCount` (false when a directive makes it unsure). */
export const connectionAsksForReadCount = selectsOnce(['edges', 'node'], 'readCount');

/** Whether the edges being resolved ask each node for `readCount` (false when a directive makes it unsure). */
export const edgesAskForReadCount = selectsOnce(['node'], 'readCount');

/** Hands each of `rows` its read count from `counts` (by seq), as its page statement counted them. */
export function carryReadCounts(rows: readonly MessageRow[], counts: ReadonlyMap<number, number>): void {
  for (const row of rows) {
    const count = counts.get(row.seq);
    if (count !== undefined) (row as CarryingRow)[READ_COUNT] = count;
  }
}

/**
 * Loads the read counts of those of `rows` (messages the viewer may see)
 * that carry none, in one batch of the request's loader, and hands each
 * row its own; null when every row already carries one.
 */
export function primeReadCounts(loaders: Loaders, rows: readonly MessageRow[]): Promise<void> | null {
  const missing = rows.filter((row) => readCountOf(row) === undefined);
  if (missing.length === 0) return null;
  return loaders.readCount.loadMany(missing.map((row) => ({ convId: row.convId, seq: row.seq }))).then((counts) => {
    counts.forEach((count, index) => {
      if (typeof count === 'number') (missing[index] as CarryingRow)[READ_COUNT] = count;
    });
  });
}

/** The read count loaded with `row`'s page, if it was. */
export function readCountOf(row: MessageRow): number | undefined {
  return (row as CarryingRow)[READ_COUNT];
}
