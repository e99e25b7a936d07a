/**
 * The edges of every keyset connection that is not a message page (inbox,
 * members, announcements, stars, ...), for the reason messageEdges.ts gives:
 * graphql-jit reads a field without a resolver as a plain property, but
 * builds several objects for every resolver call, on every edge. An edge's
 * `node` is its row and its `cursor` a getter, so a list of 100 members
 * calls no resolver per edge, and a cursor is still made only when asked
 * for. Edge types whose node is something the row holds (a star's message)
 * resolve `node` from `row` themselves.
 */

/** What makes a row's cursor: its page (`KeysetPage` in models.ts). */
interface CursorMaker<Row> {
  cursorOf(row: Row): string;
}

/** One edge: its row, and the cursor for that row's position in its page. */
export class KeysetEdgeModel<Row> {
  constructor(
    readonly row: Row,
    private readonly page: CursorMaker<Row>,
  ) {}

  get node(): Row {
    return this.row;
  }

  get cursor(): string {
    return this.page.cursorOf(this.row);
  }
}

/** The edges of a keyset page, in page order. */
export function keysetEdges<Row>(page: CursorMaker<Row> & { rows: readonly Row[] }): KeysetEdgeModel<Row>[] {
  return page.rows.map((row) => new KeysetEdgeModel(row, page));
}
