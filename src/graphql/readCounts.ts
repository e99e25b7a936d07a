/**
 * Read receipts a page loaded for all its messages at once, each kept by
 * its row, as warm texts are (warmTexts.ts): `Message.readCount` of that
 * row then answers at once. Through the loader, each of a page's 50 edges
 * waited on a promise of its own and graphql-jit finished each one in a
 * later microtask; the page asking for `readCount` served at about half
 * the rate of the page without it, in a group of 10 as in one of 10,000.
 */
import type { MessageRow } from '../store/rows.ts';
import type { Loaders } from './loaders.ts';

const READ_COUNT = Symbol('readCount');

/** A row that may carry its read count. */
type CarryingRow = MessageRow & { [READ_COUNT]?: number };

/**
 * Loads the read counts of `rows` (messages the viewer may see) in one
 * batch of the request's loader, and hands each row its own.
 */
export async function primeReadCounts(loaders: Loaders, rows: readonly MessageRow[]): Promise<void> {
  const counts = await loaders.readCount.loadMany(rows.map((row) => ({ convId: row.convId, seq: row.seq })));
  counts.forEach((count, index) => {
    if (typeof count === 'number') (rows[index] as CarryingRow)[READ_COUNT] = count;
  });
}

/** The read count loaded with `row`'s page, if it was. */
export function readCountOf(row: MessageRow): number | undefined {
  return (row as CarryingRow)[READ_COUNT];
}
