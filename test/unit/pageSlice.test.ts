import { describe, expect, it } from 'vitest';
import { sliceAround, slicePage } from '../../src/history/pageSlice.ts';
import type { PageWindow } from '../../src/history/pageWindow.ts';

// Rows are their seqs; a page of size 3 in each direction.
const forward3: PageWindow = { direction: 'forward', size: 3, afterSeq: 10 };
const backward3: PageWindow = { direction: 'backward', size: 3, beforeSeq: 20 };
const forward1: PageWindow = { direction: 'forward', size: 1, afterSeq: 0 };
const backward1: PageWindow = { direction: 'backward', size: 1, beforeSeq: null };

const page = (rows: number[], hasPreviousPage: boolean, hasNextPage: boolean) => ({ rows, hasPreviousPage, hasNextPage });

describe('slicePage forward (scanned ascending)', () => {
  it('answers an empty page with no neighbours when nothing was scanned and nothing lies behind', () => {
    expect(slicePage(forward3, [], false)).toEqual(page([], false, false));
  });

  it('answers an empty page with a previous page when only the far side of the cursor has messages', () => {
    expect(slicePage(forward3, [], true)).toEqual(page([], true, false));
  });

  it('answers one row', () => {
    expect(slicePage(forward3, [11], false)).toEqual(page([11], false, false));
  });

  it('answers exactly size rows with no next page', () => {
    expect(slicePage(forward3, [11, 12, 13], false)).toEqual(page([11, 12, 13], false, false));
  });

  it('drops the extra row of size + 1 and reports a next page', () => {
    expect(slicePage(forward3, [11, 12, 13, 14], false)).toEqual(page([11, 12, 13], false, true));
  });

  it('reports a previous page exactly when something lies behind the cursor', () => {
    expect([slicePage(forward3, [11, 12, 13, 14], true), slicePage(forward3, [11, 12, 13], true)]).toEqual([
      page([11, 12, 13], true, true),
      page([11, 12, 13], true, false),
    ]);
  });

  it('pages one at a time at size 1', () => {
    expect([slicePage(forward1, [1], false), slicePage(forward1, [1, 2], false)]).toEqual([
      page([1], false, false),
      page([1], false, true),
    ]);
  });

  it('leaves the scanned rows as they were', () => {
    const scanned = Object.freeze([11, 12, 13, 14]);
    slicePage(forward3, scanned, false);
    expect(scanned).toEqual([11, 12, 13, 14]);
  });
});

describe('slicePage backward (scanned descending, answered ascending)', () => {
  it('answers an empty page with no neighbours when nothing was scanned and nothing lies behind', () => {
    expect(slicePage(backward3, [], false)).toEqual(page([], false, false));
  });

  it('answers an empty page with a next page when only the far side of the cursor has messages', () => {
    expect(slicePage(backward3, [], true)).toEqual(page([], false, true));
  });

  it('answers one row', () => {
    expect(slicePage(backward3, [19], false)).toEqual(page([19], false, false));
  });

  it('answers exactly size rows in ascending order with no previous page', () => {
    expect(slicePage(backward3, [19, 18, 17], false)).toEqual(page([17, 18, 19], false, false));
  });

  it('drops the extra (oldest) row of size + 1 and reports a previous page', () => {
    expect(slicePage(backward3, [19, 18, 17, 16], false)).toEqual(page([17, 18, 19], true, false));
  });

  it('reports a next page exactly when something lies behind the cursor', () => {
    expect([slicePage(backward3, [19, 18, 17, 16], true), slicePage(backward3, [19, 18, 17], true)]).toEqual([
      page([17, 18, 19], true, true),
      page([17, 18, 19], false, true),
    ]);
  });

  it('pages one at a time at size 1', () => {
    expect([slicePage(backward1, [9], false), slicePage(backward1, [9, 8], false)]).toEqual([
      page([9], false, false),
      page([9], true, false),
    ]);
  });

  it('leaves the scanned rows in scan order', () => {
    const scanned = Object.freeze([19, 18, 17, 16]);
    slicePage(backward3, scanned, false);
    expect(scanned).toEqual([19, 18, 17, 16]);
  });

  it('keeps the rows themselves, not copies', () => {
    const rows = [{ seq: 19 }, { seq: 18 }];
    const sliced = slicePage(backward3, rows, false);
    expect(sliced.rows[0]).toBe(rows[1]);
    expect(sliced.rows[1]).toBe(rows[0]);
  });
});

describe('sliceAround (older descending, newer ascending)', () => {
  it('answers older, anchor and newer ascending when both sides are short of their counts', () => {
    expect(sliceAround(2, 2, [49, 48], 50, [51, 52])).toEqual(page([48, 49, 50, 51, 52], false, false));
  });

  it('drops the extra older row and reports a previous page', () => {
    expect(sliceAround(2, 2, [49, 48, 47], 50, [51, 52])).toEqual(page([48, 49, 50, 51, 52], true, false));
  });

  it('drops the extra newer row and reports a next page', () => {
    expect(sliceAround(2, 2, [49, 48], 50, [51, 52, 53])).toEqual(page([48, 49, 50, 51, 52], false, true));
  });

  it('drops both extra rows and reports both neighbours', () => {
    expect(sliceAround(2, 2, [49, 48, 47], 50, [51, 52, 53])).toEqual(page([48, 49, 50, 51, 52], true, true));
  });

  it('centres on an anchor the viewer cannot see, leaving it out', () => {
    expect(sliceAround(2, 2, [49, 48, 47], null, [51, 52, 53])).toEqual(page([48, 49, 51, 52], true, true));
  });

  it('answers the anchor alone when it is the only message', () => {
    expect(sliceAround(2, 2, [], 50, [])).toEqual(page([50], false, false));
  });

  it('answers an empty page when neither the anchor nor any neighbour is visible', () => {
    expect(sliceAround(2, 2, [], null, [])).toEqual(page([], false, false));
  });

  it('answers a shorter older side near the start of the history', () => {
    expect(sliceAround(3, 2, [1], 2, [3, 4, 5])).toEqual(page([1, 2, 3, 4], false, true));
  });

  it('answers a shorter newer side near the end of the history', () => {
    expect(sliceAround(2, 3, [49, 48, 47], 50, [51])).toEqual(page([48, 49, 50, 51], true, false));
  });

  it('answers no older rows for before 0, with a previous page exactly when one was scanned', () => {
    expect([sliceAround(0, 2, [], 50, [51, 52]), sliceAround(0, 2, [49], 50, [51, 52])]).toEqual([
      page([50, 51, 52], false, false),
      page([50, 51, 52], true, false),
    ]);
  });

  it('answers no newer rows for after 0, with a next page exactly when one was scanned', () => {
    expect([sliceAround(2, 0, [49, 48], 50, []), sliceAround(2, 0, [49, 48], 50, [51])]).toEqual([
      page([48, 49, 50], false, false),
      page([48, 49, 50], false, true),
    ]);
  });

  it('answers only the anchor for before 0 and after 0', () => {
    expect([sliceAround(0, 0, [], 50, []), sliceAround(0, 0, [49], 50, [51])]).toEqual([
      page([50], false, false),
      page([50], true, true),
    ]);
  });

  it('answers an empty page with exact flags for before 0 and after 0 around an invisible anchor', () => {
    expect([sliceAround(0, 0, [], null, []), sliceAround(0, 0, [49], null, [51])]).toEqual([
      page([], false, false),
      page([], true, true),
    ]);
  });

  it('answers one row on each side at counts of 1', () => {
    expect(sliceAround(1, 1, [49, 48], 50, [51, 52])).toEqual(page([49, 50, 51], true, true));
  });

  it('leaves the scanned rows as they were', () => {
    const older = Object.freeze([49, 48, 47]);
    const newer = Object.freeze([51, 52, 53]);
    sliceAround(2, 2, older, 50, newer);
    expect([older, newer]).toEqual([
      [49, 48, 47],
      [51, 52, 53],
    ]);
  });
});
