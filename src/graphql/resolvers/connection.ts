/** `MessageConnection`, `MessageEdge` and `PageInfo`, all derived from one scanned page. */
import { encodeChangeCursor, encodeCursor } from '../../history/cursor.ts';
import { gapsIn } from '../../history/pageSpan.ts';
import type { ConnectionModel } from '../models.ts';
import type { MessageConnectionResolvers, MessageEdgeResolvers } from '../generated/resolvers.ts';

export const MessageConnection: MessageConnectionResolvers = {
  edges: (connection) => connection.slice.rows,
  pageInfo: (connection) => ({
    hasPreviousPage: connection.slice.hasPreviousPage,
    hasNextPage: connection.slice.hasNextPage,
    startCursor: edgeCursor(connection, 'first'),
    endCursor: edgeCursor(connection, 'last'),
  }),
  startSeq: (connection) => connection.span?.from ?? null,
  endSeq: (connection) => connection.span?.to ?? null,
  gaps: (connection) => gapsIn(connection.span, connection.slice.rows.map((r) => r.seq)),
  changesCursor: (connection) => encodeChangeCursor(connection.convId, connection.changeSeq),
  latestSeq: (connection) => connection.latestSeq,
  anchorFound: (connection) => connection.anchor?.found ?? null,
};

export const MessageEdge: MessageEdgeResolvers = {
  cursor: (row) => encodeCursor(row.convId, row.seq),
  node: (row) => row,
};

/**
 * An empty page has no edge cursors, but it still has a position: a jump's
 * anchor, or the cursor it was asked from. Both its cursors point there, so
 * paging on from it is exact and a client's stored cursor is never replaced
 * by null (Apollo's relayStylePagination stores what the page says).
 */
function edgeCursor(connection: ConnectionModel, end: 'first' | 'last'): string | null {
  const rows = connection.slice.rows;
  const row = end === 'first' ? rows[0] : rows.at(-1);
  if (row !== undefined) return encodeCursor(row.convId, row.seq);
  const position = connection.anchor?.seq ?? connection.requestSeq;
  return position === null ? null : encodeCursor(connection.convId, position);
}
