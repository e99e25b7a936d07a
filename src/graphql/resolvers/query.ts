/** The `Query` root and the `Node` interface. */
import { decodeGlobalId } from '../../history/globalId.ts';
import { viewerOf } from '../context.ts';
import { echo, notFound } from '../errors.ts';
import type { NodeResolvers, QueryResolvers } from '../generated/resolvers.ts';
import { readableConversation, readableMessage } from './lookups.ts';

export const Query: QueryResolvers = {
  viewer: (_root, _args, context) => ({ id: viewerOf(context).viewerId }),
  conversation: (_root, { id }, context) => readableConversation(viewerOf(context).loaders, id),
  message: (_root, { id }, context) => readableMessage(viewerOf(context).loaders, id),
  node: async (_root, { id }, context) => {
    const { loaders } = viewerOf(context);
    const ref = decodeGlobalId(id);
    switch (ref.type) {
      case 'Conversation':
        return readableConversation(loaders, id);
      case 'Message':
        return readableMessage(loaders, id);
      case 'User':
        return { id: ref.userId };
      case 'Invalid':
        throw notFound(`No object with id ${echo(id)} that you can read.`);
    }
  },
};

export const Node: NodeResolvers = {
  // Models carry no type tag; each has a field the others lack.
  __resolveType: (model) => {
    if ('senderId' in model) return 'Message';
    if ('kind' in model) return 'Conversation';
    return 'User';
  },
};
