/** Reactions: `addReaction`, `removeReaction`, `Message.reactions` and each group's users. */
import { decodeReactorCursor, encodeReactorCursor } from '../../history/listCursors.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { canonicalReaction, reactionProblem } from '../../history/reaction.ts';
import { setReaction } from '../../store/reactions.ts';
import { viewerOf, type RequestContext } from '../context.ts';
import { badUserInput, echo } from '../errors.ts';
import type {
  MessageResolvers,
  MutationResolvers,
  ReactionGroupResolvers,
  ReactionInput,
  UserConnectionResolvers,
  UserEdgeResolvers,
} from '../generated/resolvers.ts';
import type { MessageModel } from '../models.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';
import { messageKeyOf, messageNotFound } from './lookups.ts';

/** Adds (`add`) or removes the viewer's reaction; both answer the message. */
async function react(input: ReactionInput, context: RequestContext, add: boolean): Promise<{ message: MessageModel }> {
  const { viewerId, loaders } = viewerOf(context);
  const key = messageKeyOf(input.messageId);
  const reaction = canonicalReaction(input.reaction);
  if (reaction === null) throw badUserInput(reactionProblem(input.reaction)!, 'reaction');
  const outcome = await setReaction(context.db, context.publisher, viewerId, key, reaction, add, context.retention);
  switch (outcome.kind) {
    case 'done':
      // Read after the change, not from anything this request cached before it.
      loaders.reactions.clear(key);
      return { message: outcome.message };
    case 'not-found':
      throw messageNotFound(input.messageId);
    case 'revoked':
      throw badUserInput(`Message ${echo(input.messageId)} was revoked; it takes no reactions.`, 'messageId');
    case 'too-many':
      throw badUserInput(`Message ${echo(input.messageId)} already has ${outcome.max} different reactions; react with one of those.`, 'reaction');
  }
}

export const reactionMutations: Pick<MutationResolvers, 'addReaction' | 'removeReaction'> = {
  addReaction: (_root, { input }, context) => react(input, context, true),
  removeReaction: (_root, { input }, context) => react(input, context, false),
};

export const messageReactionFields: Pick<MessageResolvers, 'reactions'> = {
  // A revoked message has none (revoking deleted them): no statement.
  reactions: (message, _args, context) =>
    message.revokedAt !== null ? [] : viewerOf(context).loaders.reactions.load({ convId: message.convId, seq: message.seq }),
};

export const ReactionGroup: ReactionGroupResolvers = {
  reaction: (group) => group.reaction,
  count: (group) => group.count,
  reactedByMe: (group) => group.reactedByMe,
  users: async (group, args, context) => {
    const first = keysetSize('reactors', args.first);
    let after = null;
    if (args.after !== null && args.after !== undefined) {
      after = decodeReactorCursor(group.convId, group.seq, group.reaction, args.after);
      if (after === null) throw badUserInput(`Argument \`after\` is not a cursor of this reaction's users: got ${echo(args.after)}.`, 'after');
    }
    const rows = await viewerOf(context).loaders.reactors.load({ convId: group.convId, seq: group.seq, reaction: group.reaction, after, limit: first + 1 });
    const { rows: page, more } = cutExtraRow(rows, first);
    const positions = new Map(page.map((row) => [row.userId, row]));
    return {
      rows: page.map((row) => ({ id: row.userId })),
      hasNextPage: more,
      hasPreviousPage: after !== null,
      cursorOf: (user) => encodeReactorCursor(group.convId, group.seq, group.reaction, positions.get(user.id)!),
    };
  },
};

export const UserConnection: UserConnectionResolvers = keysetConnectionResolvers();
