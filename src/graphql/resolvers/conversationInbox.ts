/**
 * The `Conversation` fields an inbox shows: last activity, the last message,
 * the unread count and where unread messages begin. Each reads through a request loader, so a page of
 * conversations costs one statement per field, whatever its size.
 */
import { type RequestContext, viewerOf } from '../context.ts';
import type { ConversationResolvers } from '../generated/resolvers.ts';
import type { ConversationModel } from '../models.ts';
import { conversationRow } from './lookups.ts';

/** The row, membership checked: free for rows (they were read as the viewer's), a loader batch for bare ids. */
const row = (conversation: ConversationModel, context: RequestContext) => conversationRow(viewerOf(context).loaders, conversation);

async function unread(conversation: ConversationModel, context: RequestContext) {
  return viewerOf(context).loaders.unread.load((await row(conversation, context)).id);
}

type InboxFields = 'lastActivityAt' | 'lastMessage' | 'unreadCount' | 'unreadCountCapped' | 'firstUnreadMessage';

/** Merged into `Conversation` in index.ts. */
export const conversationInboxFields: Pick<ConversationResolvers, InboxFields> = {
  lastActivityAt: async (conversation, _args, context) => (await row(conversation, context)).lastActivityAt,
  lastMessage: async (conversation, _args, context) => viewerOf(context).loaders.lastMessage.load((await row(conversation, context)).id),
  unreadCount: async (conversation, _args, context) => (await unread(conversation, context)).count,
  unreadCountCapped: async (conversation, _args, context) => (await unread(conversation, context)).capped,
  firstUnreadMessage: async (conversation, _args, context) => viewerOf(context).loaders.firstUnread.load((await row(conversation, context)).id),
};
