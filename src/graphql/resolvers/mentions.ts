/** Mentions: `Message.mentions`, `Message.mentionsEveryone`, `Conversation.unreadMentionCount` and `Viewer.mentions`. */
import { decodeMentionCursor, encodeMentionCursor } from '../../history/listCursors.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { type MentionRow, scanMentions } from '../../store/mentions.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo } from '../errors.ts';
import type {
  ConversationResolvers,
  MentionConnectionResolvers,
  MentionEdgeResolvers,
  MessageResolvers,
  ViewerResolvers,
} from '../generated/resolvers.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';

export const messageMentionFields: Pick<MessageResolvers, 'mentions' | 'mentionsEveryone'> = {
  mentions: async (message, _args, context) => {
    const { userIds } = await viewerOf(context).loaders.mentions.load({ convId: message.convId, seq: message.seq });
    return userIds.map((id) => ({ id }));
  },
  mentionsEveryone: async (message, _args, context) =>
    (await viewerOf(context).loaders.mentions.load({ convId: message.convId, seq: message.seq })).everyone,
};

export const conversationMentionFields: Pick<ConversationResolvers, 'unreadMentionCount'> = {
  unreadMentionCount: (conversation, _args, context) => viewerOf(context).loaders.unreadMentions.load(conversation.id),
};

export const viewerMentionFields: Pick<ViewerResolvers, 'mentions'> = {
  mentions: async (_viewer, args, context) => {
    const { viewerId } = viewerOf(context);
    const first = keysetSize('mentions', args.first);
    const after = args.after === null || args.after === undefined ? null : decodeMentionCursor(args.after);
    if (after === null && args.after !== null && args.after !== undefined) {
      throw badUserInput(`Argument \`after\` is not a cursor of your mentions: got ${echo(args.after)}.`, 'after');
    }
    const { rows, more } = cutExtraRow(await scanMentions(context.db, viewerId, context.retention, after, first + 1), first);
    return { rows, hasNextPage: more, hasPreviousPage: after !== null, cursorOf: (row: MentionRow) => encodeMentionCursor(row.position) };
  },
};

export const MentionConnection: MentionConnectionResolvers = keysetConnectionResolvers<MentionRow>();
export const MentionEdge: MentionEdgeResolvers = {
  node: (edge) => edge.row.message,
  everyone: (edge) => edge.row.everyone,
};
