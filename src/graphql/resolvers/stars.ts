/** Stars: `starMessage`, `unstarMessage`, `Message.starredByMe` and `Viewer.starredMessages`. */
import { decodeStarCursor, encodeStarCursor } from '../../history/listCursors.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { scanStarred, setStar, type StarredRow } from '../../store/stars.ts';
import { type RequestContext, viewerOf } from '../context.ts';
import { badUserInput, echo } from '../errors.ts';
import type {
  MessageResolvers,
  MutationResolvers,
  StarInput,
  StarredMessageConnectionResolvers,
  StarredMessageEdgeResolvers,
  ViewerResolvers,
} from '../generated/resolvers.ts';
import type { MessageModel } from '../models.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';
import { messageKeyOf, messageNotFound } from './lookups.ts';

async function starred(input: StarInput, context: RequestContext, on: boolean): Promise<{ message: MessageModel }> {
  const { viewerId, loaders } = viewerOf(context);
  const key = messageKeyOf(input.messageId);
  const outcome = await setStar(context.db, viewerId, key, on, context.retention);
  if (outcome.kind === 'not-found') throw messageNotFound(input.messageId);
  loaders.starred.clear(key).prime(key, on);
  return { message: outcome.message };
}

export const starMutations: Pick<MutationResolvers, 'starMessage' | 'unstarMessage'> = {
  starMessage: (_root, { input }, context) => starred(input, context, true),
  unstarMessage: (_root, { input }, context) => starred(input, context, false),
};

export const messageStarFields: Pick<MessageResolvers, 'starredByMe'> = {
  starredByMe: (message, _args, context) => viewerOf(context).loaders.starred.load({ convId: message.convId, seq: message.seq }),
};

export const viewerStarFields: Pick<ViewerResolvers, 'starredMessages'> = {
  starredMessages: async (_viewer, args, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const first = keysetSize('starred', args.first);
    const after = args.after === null || args.after === undefined ? null : decodeStarCursor(args.after);
    if (after === null && args.after !== null && args.after !== undefined) {
      throw badUserInput(`Argument \`after\` is not a cursor of your starred messages: got ${echo(args.after)}.`, 'after');
    }
    const { rows, more } = cutExtraRow(await scanStarred(context.db, viewerId, context.retention, after, first + 1), first);
    // Each is starred by the viewer: `starredByMe` needs no statement.
    for (const row of rows) loaders.starred.prime(row.position, true);
    return { rows, hasNextPage: more, hasPreviousPage: after !== null, cursorOf: (row: StarredRow) => encodeStarCursor(row.position) };
  },
};

export const StarredMessageConnection: StarredMessageConnectionResolvers = keysetConnectionResolvers<StarredRow>();
export const StarredMessageEdge: StarredMessageEdgeResolvers = {
  node: (edge) => edge.row.message,
  starredAt: (edge) => edge.row.starredAt,
};
