/**
 * Cutting fetched index rows into a page with exact flags. The store fetches
 * one row more than the page holds on the side it scans (that row answers
 * "is there more this way") and an existence flag for the side it came from.
 */
import type { PageWindow } from './pageWindow.ts';

/** A page: rows in ascending seq order and exact flags both ways. */
export interface PageSlice<Row> {
  rows: Row[];
  hasPreviousPage: boolean;
  hasNextPage: boolean;
}

/**
 * Cuts a keyset page. `scanned` is in scan order (ascending for forward,
 * descending for backward), at most `size + 1` rows; `behindExists` says
 * whether a visible message lies on the far side of the cursor (seq <= after,
 * or seq >= before).
 */
export function slicePage<Row>(window: PageWindow, scanned: readonly Row[], behindExists: boolean): PageSlice<Row> {
  const more = scanned.length > window.size;
  const kept = scanned.slice(0, window.size);
  if (window.direction === 'forward') {
    return { rows: kept, hasPreviousPage: behindExists, hasNextPage: more };
  }
  return { rows: kept.reverse(), hasPreviousPage: more, hasNextPage: behindExists };
}

/**
 * Cuts a page around an anchor. `older` is descending (at most before + 1
 * rows), `newer` ascending (at most after + 1), `anchor` the anchor row when
 * it is visible.
 */
export function sliceAround<Row>(
  before: number,
  after: number,
  older: readonly Row[],
  anchor: Row | null,
  newer: readonly Row[],
): PageSlice<Row> {
  const rows = older.slice(0, before).reverse();
  if (anchor !== null) rows.push(anchor);
  rows.push(...newer.slice(0, after));
  return { rows, hasPreviousPage: older.length > before, hasNextPage: newer.length > after };
}
