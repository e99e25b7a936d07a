/** `Message` and what it shows. */
import { messageGlobalId } from '../../history/globalId.ts';
import { viewerOf } from '../context.ts';
import { archiveUnavailable, notFound } from '../errors.ts';
import { conversationRow } from './lookups.ts';
import { readCountOf } from '../readCounts.ts';
import { warmTextOf } from '../warmTexts.ts';
import type { MessageContentResolvers, MessageResolvers, ResolversTypes, RevokedContentResolvers } from '../generated/resolvers.ts';
import type { MessageBody } from '../../store/messages.ts';

// `seq` and `createdAt` have no resolver: graphql-jit reads them off the row
// as properties, where a resolver costs objects per field (messageEdges.ts).
export const Message: MessageResolvers = {
  id: (message) => messageGlobalId(message.convId, message.seq),
  sender: (message) => ({ id: message.senderId }),
  conversation: (message, _args, context) => conversationRow(viewerOf(context).loaders, { id: message.convId, unchecked: true }),
  content: (message, _args, context) => {
    if (message.revokedAt !== null) {
      return { __typename: 'RevokedContent', revokedAt: message.revokedAt, revokedBy: message.revokedBy ?? '' };
    }
    // Read in the same snapshot as the row: at once, no promise (warmTexts.ts).
    const warm = warmTextOf(message);
    if (warm !== undefined) return { __typename: 'TextContent', text: warm };
    // The body read also reports a revoke that committed after the page was
    // scanned, so revoked text is never served.
    return viewerOf(context).loaders.body.load({ convId: message.convId, seq: message.seq }).then(contentOf);
  },
  // Loaded with the page when it asked for it (readCounts.ts).
  readCount: (message, _args, context) => readCountOf(message) ?? viewerOf(context).loaders.readCount.load({ convId: message.convId, seq: message.seq }),
};

/** What a message read from its body shows. */
function contentOf(body: MessageBody): ResolversTypes['MessageContent'] {
  switch (body.kind) {
    case 'text':
      return { __typename: 'TextContent', text: body.text };
    case 'revoked':
      return { __typename: 'RevokedContent', revokedAt: body.revokedAt, revokedBy: body.revokedBy };
    case 'erased':
      return { __typename: 'PurgedContent', purgedAt: body.erasedAt };
    case 'missing':
      throw notFound('The message was deleted while this page was being read.');
    case 'unavailable':
      throw archiveUnavailable(body.error.problem);
  }
}

export const MessageContent: MessageContentResolvers = {
  __resolveType: (content) => content.__typename,
};

export const RevokedContent: RevokedContentResolvers = {
  revokedBy: (content) => ({ id: content.revokedBy }),
};
