/** Pins: `pinMessage`, `unpinMessage`, `setConversationSettings`, `Conversation.membersMayPin` and `pinnedMessages`. */
import { decodePinCursor, encodePinCursor } from '../../history/listCursors.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { MAX_PINS_PER_CONVERSATION } from '../../history/pinRule.ts';
import { setMembersMayPin } from '../../store/members.ts';
import { type PinRow, scanPins, setPin } from '../../store/pins.ts';
import { type RequestContext, viewerOf } from '../context.ts';
import { badUserInput, echo, forbidden } from '../errors.ts';
import type {
  ConversationResolvers,
  MutationResolvers,
  PinInput,
  PinnedMessageConnectionResolvers,
  PinnedMessageEdgeResolvers,
} from '../generated/resolvers.ts';
import type { PinPayloadModel } from '../models.ts';
import { conversationUuid } from './arguments.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';
import { conversationNotFound, conversationRow, freshConversation, messageKeyOf, messageNotFound } from './lookups.ts';

async function pinned(input: PinInput, context: RequestContext, on: boolean): Promise<PinPayloadModel> {
  const { viewerId, admin, loaders } = viewerOf(context);
  const key = messageKeyOf(input.messageId);
  const outcome = await setPin(context.db, context.publisher, viewerId, admin, key, on, context.retention);
  switch (outcome.kind) {
    case 'done':
      return { message: outcome.message, conversation: await freshConversation(loaders, key.convId) };
    case 'not-found':
      throw messageNotFound(input.messageId);
    case 'refused':
      if (outcome.reason === 'not-allowed') {
        throw forbidden(`Only the group's owner and admins may pin or unpin in this group (its owner can let every member: \`membersMayPin\`).`);
      }
      throw badUserInput(
        outcome.reason === 'revoked'
          ? `Message ${echo(input.messageId)} was revoked; it cannot be pinned.`
          : `This conversation already has ${MAX_PINS_PER_CONVERSATION} pinned messages; unpin one first.`,
        'messageId',
      );
  }
}

export const pinMutations: Pick<MutationResolvers, 'pinMessage' | 'unpinMessage' | 'setConversationSettings'> = {
  pinMessage: (_root, { input }, context) => pinned(input, context, true),
  unpinMessage: (_root, { input }, context) => pinned(input, context, false),
  setConversationSettings: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    if (input.membersMayPin !== null && input.membersMayPin !== undefined) {
      const outcome = await setMembersMayPin(context.db, viewerId, convId, input.membersMayPin);
      if (outcome.kind === 'not-found') throw conversationNotFound(input.conversationId);
      if (outcome.kind === 'forbidden') throw forbidden("Only the group's owner can change its settings.");
      if (outcome.kind === 'direct') throw badUserInput('A direct conversation has no settings to change.', 'conversationId');
    }
    return { conversation: await freshConversation(loaders, convId) };
  },
};

export const conversationPinFields: Pick<ConversationResolvers, 'membersMayPin' | 'pinnedMessages'> = {
  membersMayPin: async (conversation, _args, context) => {
    const row = await conversationRow(viewerOf(context).loaders, conversation);
    return row.kind === 'direct' || row.membersMayPin;
  },
  pinnedMessages: async (conversation, args, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const first = keysetSize('pins', args.first);
    const after = args.after === null || args.after === undefined ? null : decodePinCursor(conversation.id, args.after);
    if (after === null && args.after !== null && args.after !== undefined) {
      throw badUserInput(`Argument \`after\` is not a cursor of this conversation's pins: got ${echo(args.after)}.`, 'after');
    }
    // Membership first: a non-member is told NOT_FOUND, not an empty list.
    await conversationRow(loaders, conversation);
    const { rows, more } = cutExtraRow(await scanPins(context.db, viewerId, context.retention, conversation.id, after, first + 1), first);
    return { rows, hasNextPage: more, hasPreviousPage: after !== null, cursorOf: (row: PinRow) => encodePinCursor(conversation.id, row.position) };
  },
};

export const PinnedMessageConnection: PinnedMessageConnectionResolvers = keysetConnectionResolvers<PinRow>();
export const PinnedMessageEdge: PinnedMessageEdgeResolvers = {
  node: (edge) => edge.row.message,
  pinnedAt: (edge) => edge.row.pinnedAt,
  pinnedBy: (edge) => ({ id: edge.row.pinnedBy }),
};
