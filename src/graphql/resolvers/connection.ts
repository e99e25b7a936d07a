/** `MessageConnection` and `PageInfo`, derived from one scanned page; its edges are `MessageEdgeModel`s (messageEdges.ts). */
import type { GraphQLResolveInfo } from 'graphql';
import { encodeChangeCursor, encodeCursor } from '../../history/cursor.ts';
import { gapsIn } from '../../history/pageSpan.ts';
import type { ConnectionModel } from '../models.ts';
import type { MessageConnectionResolvers } from '../generated/resolvers.ts';
import { viewerOf } from '../context.ts';
import { messageEdges } from '../messageEdges.ts';
import { edgesAskForReadCount, primeReadCounts } from '../readCounts.ts';

export const MessageConnection: MessageConnectionResolvers = {
  edges: (connection, _args, context, info) => {
    const rows = connection.slice.rows;
    if (rows.length === 0 || !edgesAskForReadCount(info)) return messageEdges(rows);
    // One batch for the receipts the page statement did not count, before
    // the edges, so each edge's `readCount` is at hand.
    const loading = primeReadCounts(viewerOf(context).loaders, rows);
    return loading === null ? messageEdges(rows) : loading.then(() => messageEdges(rows));
  },
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
  firstUnreadSeq: (connection) => connection.firstUnreadSeq ?? null,
  cutShort: (connection) =>
    connection.cut === null
      ? null
      : {
          reason: connection.cut.reason,
          message:
            connection.cut.reason === 'ARCHIVE_TIMEOUT'
              ? 'Archived messages did not arrive in time; page on from the cut side to get them.'
              : 'Archived messages cannot be read right now; they are left out, and paging on from the cut side asks for them again.',
        },
};

/**
 * An empty page has no edge cursors, but it still has a position: where it
 * was cut short (just past the message left out, on that side), a jump's
 * anchor, or the cursor it was asked from. Both its cursors point there, so
 * paging on from it is exact and a client's stored cursor is never replaced
 * by null (Apollo's relayStylePagination stores what the page says).
 */
function edgeCursor(connection: ConnectionModel, end: 'first' | 'last'): string | null {
  const rows = connection.slice.rows;
  const row = end === 'first' ? rows[0] : rows.at(-1);
  if (row !== undefined) return encodeCursor(row.convId, row.seq);
  const cut = connection.cut?.at;
  if (end === 'first' && cut?.older != null) return encodeCursor(connection.convId, cut.older + 1);
  if (end === 'last' && cut?.newer != null) return encodeCursor(connection.convId, cut.newer - 1);
  const position = connection.anchor?.seq ?? connection.requestSeq;
  return position === null ? null : encodeCursor(connection.convId, position);
}
