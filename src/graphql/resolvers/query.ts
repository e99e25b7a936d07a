/** The `Query` root and the `Node` interface. */
import { decodeConversationId, decodeGlobalId } from '../../history/globalId.ts';
import { selectedFieldNames } from '../selection.ts';
import { viewerOf } from '../context.ts';
import { echo, notFound } from '../errors.ts';
import type { NodeResolvers, QueryResolvers } from '../generated/resolvers.ts';
import { findAnnouncement } from '../../store/announcements.ts';
import { readableConversation, readableMessage } from './lookups.ts';

export const Query: QueryResolvers = {
  viewer: (_root, _args, context) => ({ id: viewerOf(context).viewerId }),
  conversation: async (_root, { id }, context, info) => {
    const { loaders } = viewerOf(context);
    // Only pages asked for: their statement checks membership, so skip the row.
    const names = selectedFieldNames(info);
    const convId = decodeConversationId(id);
    if (convId !== null && names !== null && asksOnlyForPages(names)) return { id: convId, unchecked: true };
    return readableConversation(loaders, id);
  },
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
      case 'Announcement': {
        const found = await findAnnouncement(context.db, viewerOf(context).viewerId, ref.id);
        if (found.kind === 'not-found') throw notFound(`No object with id ${echo(id)} that you can read.`);
        return found.announcement;
      }
      case 'Invalid':
        throw notFound(`No object with id ${echo(id)} that you can read.`);
    }
  },
};

/** Fields whose statements check membership themselves. */
const PAGE_FIELDS = new Set(['messages', 'messagesAround', 'messagesAt', 'changes', 'members', 'id', '__typename']);

/** Whether a Conversation selection reads pages and nothing that needs the row first. */
function asksOnlyForPages(names: Set<string>): boolean {
  return [...names].some((name) => name !== 'id' && name !== '__typename') && [...names].every((name) => PAGE_FIELDS.has(name));
}

export const Node: NodeResolvers = {
  // Models carry no type tag; each has a field the others lack.
  __resolveType: (model) => {
    if ('senderId' in model) return 'Message';
    if ('publishedAt' in model) return 'Announcement';
    if ('kind' in model || 'unchecked' in model) return 'Conversation';
    return 'User';
  },
};
