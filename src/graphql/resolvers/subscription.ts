/** `Subscription` and the events it delivers. */
import { encodeCursor } from '../../history/cursor.ts';
import { decodeConversationId } from '../../history/globalId.ts';
import { isSubscriptionContext, type LiveItem } from '../liveEvents.ts';
import { viewerOf } from '../context.ts';
import type { ConversationEventResolvers, SubscriptionResolvers } from '../generated/resolvers.ts';
import { conversationNotFound } from './lookups.ts';

export const Subscription: SubscriptionResolvers = {
  conversationEvents: {
    subscribe: async (_root, { conversationId }, context) => {
      const { viewerId, loaders } = viewerOf(context);
      // HTTP refuses subscriptions at validation; only the WebSocket server gets here.
      if (!isSubscriptionContext(context)) throw new Error('conversationEvents runs only over WebSocket.');
      const convId = decodeConversationId(conversationId);
      if (convId === null) throw conversationNotFound(conversationId);
      // Listening before the membership check: nothing committed after the
      // check can slip in between the two.
      const events = context.live.open(context, convId, viewerId);
      let member = false;
      try {
        member = (await loaders.conversation.load(convId)) !== null;
      } finally {
        if (!member) await events.return?.();
      }
      if (!member) throw conversationNotFound(conversationId);
      return events;
    },
    resolve: (item: LiveItem) => {
      if (item.kind === 'end') throw item.error;
      return item.event;
    },
  },
};

export const ConversationEvent: ConversationEventResolvers = {
  user: (event) => (event.userId === null ? null : { id: event.userId }),
  cursor: (event) => encodeCursor(event.convId, event.toSeq),
};
