/**
 * The edges and page info of every keyset connection that is not a message
 * page (inbox, members, announcements): each is a `KeysetPage` of rows with
 * a way to make a row's cursor, so the connection resolvers are written once.
 * The edges themselves need no resolvers (keysetEdges.ts).
 */
import { type ListName, listSize } from '../../history/listSizes.ts';
import { badUserInput } from '../errors.ts';
import { keysetEdges } from '../keysetEdges.ts';
import type { KeysetPage, PageInfoModel } from '../models.ts';

/** The page info of a keyset page: cursors of its first and last rows. */
function keysetPageInfo<Row>(page: KeysetPage<Row>): PageInfoModel {
  const first = page.rows[0];
  const last = page.rows.at(-1);
  return {
    hasPreviousPage: page.hasPreviousPage,
    hasNextPage: page.hasNextPage,
    startCursor: first === undefined ? null : page.cursorOf(first),
    endCursor: last === undefined ? null : page.cursorOf(last),
  };
}

/** The size a list's `first` argument asks for, from the one table of list sizes; `BAD_USER_INPUT` naming it when out of range. */
export function keysetSize(list: ListName, first: number | null | undefined): number {
  const checked = listSize(list, 'first', first);
  if (!checked.ok) throw badUserInput(checked.problem.message, checked.problem.argumentName);
  return checked.size;
}

/** The resolvers of a keyset connection type: its edges and page info. */
export function keysetConnectionResolvers<Row>() {
  return {
    edges: (page: KeysetPage<Row>) => keysetEdges(page),
    pageInfo: (page: KeysetPage<Row>) => keysetPageInfo(page),
  };
}
