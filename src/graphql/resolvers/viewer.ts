/** `Viewer` (the caller) and their inbox: `conversations`, its connection and edges. */
import { decodeInboxCursor, encodeInboxCursor } from '../../history/inboxCursor.ts';
import { scanInbox } from '../../store/inbox.ts';
import type { ConversationRow } from '../../store/rows.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo } from '../errors.ts';
import type { ConversationConnectionResolvers, ViewerResolvers } from '../generated/resolvers.ts';
import type { ConversationConnectionModel } from '../models.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';


/** `Viewer` but its announcements (see announcements.ts). */
export const Viewer: Pick<ViewerResolvers, 'user' | 'conversations'> = {
  user: (viewer) => ({ id: viewer.id }),
  conversations: async (_viewer, args, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const first = keysetSize('conversations', args.first);
    const after = args.after === null || args.after === undefined ? null : decodeInboxCursor(args.after);
    if (after === null && args.after !== null && args.after !== undefined) {
      throw badUserInput(
        `Argument \`after\` is not an inbox cursor: got ${echo(args.after)}. Use a \`pageInfo.endCursor\` of \`conversations\`.`,
        'after',
      );
    }
    const page = await scanInbox(context.db, viewerId, context.retention, after, first);
    const cursors = new Map<string, string>();
    for (const { conversation, position } of page.entries) {
      // The rows are the viewer's: fields such as `title` need no statement of their own.
      loaders.conversation.prime(conversation.id, conversation);
      cursors.set(conversation.id, encodeInboxCursor(position));
    }
    const connection: ConversationConnectionModel = {
      rows: page.entries.map((e) => e.conversation),
      hasNextPage: page.hasNextPage,
      hasPreviousPage: after !== null,
      cursorOf: (row: ConversationRow) => cursors.get(row.id)!,
    };
    return connection;
  },
};

export const ConversationConnection: ConversationConnectionResolvers = keysetConnectionResolvers<ConversationRow>();
