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
 * The one place a fetched page is cut to size: every keyset read fetches
 * `size + 1` rows in scan order, and the extra row only answers "is there
 * more this way".
 */
export function cutExtraRow<Row>(scanned: readonly Row[], size: number): { rows: Row[]; more: boolean } {
  return { rows: scanned.slice(0, size), more: scanned.length > size };
}

/**
 * Cuts a keyset page. `scanned` is in scan order (ascending for forward,
 * descending for backward), at most `size + 1` rows; `behindExists` says
 * whether a visible message lies on the far side of the cursor (seq <= after,
 * or seq >= before).
 */
export function slicePage<Row>(window: PageWindow, scanned: readonly Row[], behindExists: boolean): PageSlice<Row> {
  const { rows: kept, more } = cutExtraRow(scanned, window.size);
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
  const olderCut = cutExtraRow(older, before);
  const newerCut = cutExtraRow(newer, after);
  const rows = olderCut.rows.reverse();
  if (anchor !== null) rows.push(anchor);
  rows.push(...newerCut.rows);
  return { rows, hasPreviousPage: olderCut.more, hasNextPage: newerCut.more };
}
