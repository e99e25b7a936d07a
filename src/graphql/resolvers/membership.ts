/** Group membership: who is in, their roles, what newcomers see, and the changes to all of it. */
import { conversationGlobalId } from '../../history/globalId.ts';
import { isoOfMillis } from '../../history/isoMillis.ts';
import { decodeMemberCursor, encodeMemberCursor } from '../../history/listCursors.ts';
import {
  addMembers,
  leaveConversation,
  listMembers,
  type MembershipRefusal,
  type MemberPosition,
  type MemberRow,
  removeMember,
  setHistoryVisibility,
} from '../../store/members.ts';
import { membershipNotice } from '../../store/notify.ts';
import { cutExtraRow } from '../../history/pageSlice.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo, forbidden } from '../errors.ts';
import type { ConversationResolvers, MemberConnectionResolvers, MutationResolvers } from '../generated/resolvers.ts';
import type { KeysetPage, MemberModel } from '../models.ts';
import { checkUserId, conversationUuid, MAX_MEMBERS } from './arguments.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';
import { conversationNotFound, conversationRow, freshConversation } from './lookups.ts';

/**
 * The hook removeMember and leaveConversation run inside their transaction:
 * nothing, since the membership notice is published after the commit.
 */
const NOTHING_MORE = async (): Promise<void> => undefined;


/** The error for a refused membership change on conversation `id`. */
function refusal(outcome: MembershipRefusal, id: string, what: string) {
  switch (outcome.kind) {
    case 'not-found':
      return conversationNotFound(id);
    case 'forbidden':
      return forbidden(`Only the group's owner can ${what}.`);
    case 'direct':
      return badUserInput(`Only groups have an owner who can ${what}; a direct conversation always has exactly its two users.`);
  }
}

/** A member row as the API shows it: the join time spelled here, from the milliseconds the row carries (MemberRow). */
function memberModel(row: MemberRow): MemberModel {
  const joinedAt = isoOfMillis(row.joinedMillis);
  return { user: { id: row.userId }, role: row.role === 'owner' ? 'OWNER' : 'MEMBER', joinedAt, joinedMillis: row.joinedMillis, readSeq: row.readSeq };
}

export const conversationMembershipFields: Pick<ConversationResolvers, 'myRole' | 'historyVisibility' | 'members'> = {
  myRole: async (conversation, _args, context) =>
    (await conversationRow(viewerOf(context).loaders, conversation)).role === 'owner' ? 'OWNER' : 'MEMBER',
  historyVisibility: async (conversation, _args, context) =>
    (await conversationRow(viewerOf(context).loaders, conversation)).historyVisibility === 'since_joined' ? 'SINCE_JOINED' : 'SHARED',
  members: async (conversation, args, context) => {
    const { viewerId } = viewerOf(context);
    const first = keysetSize('members', args.first);
    let after: MemberPosition | null = null;
    if (args.after !== null && args.after !== undefined) {
      after = decodeMemberCursor(conversation.id, args.after);
      if (after === null) throw badUserInput(`Argument \`after\` is not a members cursor of this conversation: got ${echo(args.after)}.`, 'after');
    }
    const found = await listMembers(context.db, viewerId, conversation.id, after, first);
    if (found.kind === 'not-found') throw conversationNotFound(conversationGlobalId(conversation.id));
    const { rows: kept, more } = cutExtraRow(found.rows, first);
    const page: KeysetPage<MemberModel> = {
      rows: kept.map(memberModel),
      hasNextPage: more,
      hasPreviousPage: after !== null,
      cursorOf: (member) => encodeMemberCursor(conversation.id, member.joinedMillis, member.user.id),
    };
    return page;
  },
};

export const MemberConnection: MemberConnectionResolvers = keysetConnectionResolvers<MemberModel>();

export const membershipMutations: Pick<
  MutationResolvers,
  'addMembers' | 'removeMember' | 'leaveConversation' | 'setHistoryVisibility'
> = {
  addMembers: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    if (input.userIds.length === 0 || input.userIds.length > MAX_MEMBERS) {
      throw badUserInput(`Argument \`userIds\` must name 1 to ${MAX_MEMBERS} users, got ${input.userIds.length}.`, 'userIds');
    }
    for (const userId of input.userIds) checkUserId('userIds', userId);
    const outcome = await addMembers(context.db, viewerId, convId, input.userIds);
    if (outcome.kind !== 'added') throw refusal(outcome, input.conversationId, 'add members');
    return { conversation: await freshConversation(loaders, convId), addedCount: outcome.count };
  },

  removeMember: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    checkUserId('userId', input.userId);
    const outcome = await removeMember(context.db, viewerId, convId, input.userId, NOTHING_MORE);
    switch (outcome.kind) {
      case 'removed':
        // Once committed: their open subscriptions re-check membership and end with FORBIDDEN.
        context.publisher.publish([membershipNotice(convId, input.userId)]);
        return { conversation: await freshConversation(loaders, convId) };
      case 'self':
        throw badUserInput('An owner cannot remove themselves; use `leaveConversation`.', 'userId');
      case 'not-in-group':
        throw badUserInput(`User ${echo(input.userId)} is not a member of this group.`, 'userId');
      default:
        throw refusal(outcome, input.conversationId, 'remove members');
    }
  },

  leaveConversation: async (_root, { input }, context) => {
    const { viewerId } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    const outcome = await leaveConversation(context.db, viewerId, convId, NOTHING_MORE);
    if (outcome.kind === 'not-found') throw conversationNotFound(input.conversationId);
    if (outcome.kind === 'direct') throw badUserInput('A direct conversation cannot be left.', 'conversationId');
    context.publisher.publish([membershipNotice(convId, viewerId)]);
    return { conversationId: input.conversationId };
  },

  setHistoryVisibility: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    const visibility = input.historyVisibility === 'SINCE_JOINED' ? 'since_joined' : 'shared';
    const outcome = await setHistoryVisibility(context.db, viewerId, convId, visibility);
    if (outcome.kind !== 'set') throw refusal(outcome, input.conversationId, 'change history visibility');
    return { conversation: await freshConversation(loaders, convId) };
  },
};
