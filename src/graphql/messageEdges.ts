/**
 * The edges of a message page (`MessageEdge`). graphql-jit reads a field
 * without a resolver as a plain property, but calls a resolver through a
 * resolve-info object, a response path of six objects, an arguments object
 * and three closures, for every field of every edge. On a page of 50 those
 * were most of what the server allocated for the request. So an edge is an
 * object whose `node` is its row and whose `cursor` is a getter: both fields
 * are read as properties, and the cursor is still made only when asked for.
 */
import { encodeCursor } from '../history/cursor.ts';
import type { MessageRow } from '../store/rows.ts';

/** One edge: its message row, and the cursor for that row's position. */
export class MessageEdgeModel {
  constructor(readonly node: MessageRow) {}

  get cursor(): string {
    return encodeCursor(this.node.convId, this.node.seq);
  }
}

/** The edges of `rows`, in their order. */
export function messageEdges(rows: readonly MessageRow[]): MessageEdgeModel[] {
  return rows.map((row) => new MessageEdgeModel(row));
}
