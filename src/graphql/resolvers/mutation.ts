/**
 * `Mutation`. Each resolver validates its input completely before it writes,
 * and each write is one statement or one transaction, so a refused call
 * changes nothing.
 */
import { messageGlobalId } from '../../history/globalId.ts';
import { textProblem } from '../../history/messageText.ts';
import { codePointLength, isStorable } from '../../history/storableText.ts';
import { clearHistory, createGroup, markRead, markUnread, openDirect } from '../../store/conversations.ts';
import { policyProblem } from '../../history/retention.ts';
import { hideMessages } from '../../store/hides.ts';
import { messageKeyString } from '../../store/messages.ts';
import { eraseUser, purgeMessages, setRetentionPolicy } from '../../store/lifecycle.ts';
import { processArchive } from '../../archive/reader.ts';
import { revokeMessage } from '../../store/revokes.ts';
import { findByClientId, type MentionsToStore, type ReplyTarget } from '../../store/sends.ts';
import { findMentionFacts } from '../../store/mentions.ts';
import { distinctMentions, MAX_MENTIONED_USERS, mayMentionEveryone } from '../../history/mentionRule.ts';
import type { SqlRunner } from '../../db/runner.ts';
import { conversationGlobalId, decodeMessageId } from '../../history/globalId.ts';
import type { Loaders } from '../loaders.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo, forbidden, notFound } from '../errors.ts';
import type { MutationResolvers, SendMessageInput } from '../generated/resolvers.ts';
import { checkedTitle, checkUserId, conversationUuid, MAX_MEMBERS } from './arguments.ts';
import { conversationNotFound, freshConversation, messageKeyOf, messageNotFound } from './lookups.ts';

const MAX_CLIENT_MSG_ID = 128;
const MAX_HIDE_IDS = 100;
const MAX_PURGE_IDS = 100;

/** Distinct message keys of `ids` (1 to `max` of them); `NOT_FOUND` for an id that is not a message id. */
function messageKeysOf(argumentName: string, ids: readonly string[], max: number) {
  if (ids.length === 0 || ids.length > max) {
    throw badUserInput(`Argument \`${argumentName}\` must hold 1 to ${max} ids, got ${ids.length}.`, argumentName);
  }
  const keys = new Map(ids.map((id) => {
    const key = messageKeyOf(id);
    return [messageKeyString(key), key] as const;
  }));
  return [...keys.values()];
}

/**
 * What a reply to `replyToMessageId` points at: a message of conversation
 * `convId` that the sender can see and that is not revoked; its thread is
 * the original's (threads are one level deep). `BAD_USER_INPUT` naming the
 * argument otherwise, and `NOT_FOUND` for a sender who is not a member, who
 * learns nothing about the target.
 */
async function replyTarget(loaders: Loaders, convId: string, replyToMessageId: string): Promise<ReplyTarget> {
  const key = decodeMessageId(replyToMessageId);
  const original = key === null || key.convId !== convId ? null : await loaders.message.load(key);
  // Someone who is not a member learns nothing about the reply target: the conversation is not found.
  if (original === null && (await loaders.conversation.load(convId)) === null) throw conversationNotFound(conversationGlobalId(convId));
  if (original === null || original.revokedAt !== null) {
    throw badUserInput(
      `Argument \`replyToMessageId\` must be a message of this conversation that you can see and that was not revoked, got ${echo(replyToMessageId)}.`,
      'replyToMessageId',
    );
  }
  return { replyToSeq: original.seq, threadRootSeq: original.threadRootSeq ?? original.seq };
}

/**
 * Who a send mentions: `mentionUserIds` (each a member; at most
 * MAX_MENTIONED_USERS distinct, repeats counting once) and everyone (the
 * group's owner and admins only). One statement, and only when the send
 * mentions anyone. `NOT_FOUND` for a sender who is not a member, who learns
 * nothing about who is.
 */
async function mentionsToStore(db: SqlRunner, viewerId: string, admin: boolean, convId: string, input: SendMessageInput): Promise<MentionsToStore> {
  const given = input.mentionUserIds ?? [];
  const everyone = input.mentionEveryone === true;
  if (given.length === 0 && !everyone) return { userIds: [], everyone: false };
  for (const id of given) checkUserId('mentionUserIds', id);
  const userIds = distinctMentions(given);
  if (userIds === null) {
    throw badUserInput(`Argument \`mentionUserIds\` may name at most ${MAX_MENTIONED_USERS} distinct users, got ${new Set(given).size}.`, 'mentionUserIds');
  }
  const facts = await findMentionFacts(db, viewerId, convId, userIds);
  if (facts.kind === 'not-found') throw conversationNotFound(input.conversationId);
  if (everyone && !mayMentionEveryone({ conversationKind: facts.conversationKind, senderRole: facts.senderRole, admin })) {
    throw forbidden(
      facts.conversationKind === 'direct'
        ? 'A direct conversation has no `mentionEveryone`: name the other person in `mentionUserIds`.'
        : "Only the group's owner and admins may mention everyone (`mentionEveryone`).",
    );
  }
  const memberIds = new Set(facts.memberIds);
  const stranger = userIds.find((id) => !memberIds.has(id));
  if (stranger !== undefined) {
    throw badUserInput(`Argument \`mentionUserIds\` must name members of this conversation; ${echo(stranger)} is not one.`, 'mentionUserIds');
  }
  return { userIds, everyone };
}

export const Mutation: MutationResolvers = {
  createConversation: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const title = input.title === null || input.title === undefined ? null : checkedTitle('title', input.title);
    if (input.memberIds.length > MAX_MEMBERS) {
      throw badUserInput(`Argument \`memberIds\` may name at most ${MAX_MEMBERS} users, got ${input.memberIds.length}.`, 'memberIds');
    }
    for (const memberId of input.memberIds) checkUserId('memberIds', memberId);
    const visibility = input.historyVisibility === 'SINCE_JOINED' ? 'since_joined' : 'shared';
    const convId = await createGroup(context.db, viewerId, title, input.memberIds, visibility);
    return { conversation: await freshConversation(loaders, convId) };
  },

  openDirectConversation: async (_root, { userId }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    checkUserId('userId', userId);
    const convId = await openDirect(context.db, viewerId, userId);
    return { conversation: await freshConversation(loaders, convId) };
  },

  sendMessage: async (_root, { input }, context) => {
    const { viewerId, admin, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    const idLength = codePointLength(input.clientMsgId, MAX_CLIENT_MSG_ID);
    if (idLength === 0 || idLength > MAX_CLIENT_MSG_ID || !isStorable(input.clientMsgId)) {
      throw badUserInput(
        `Argument \`clientMsgId\` must be 1 to ${MAX_CLIENT_MSG_ID} characters with no NUL or unpaired surrogate, got ${echo(input.clientMsgId)}.`,
        'clientMsgId',
      );
    }
    const problem = textProblem(input.text);
    if (problem !== null) throw badUserInput(problem, 'text');
    let reply: ReplyTarget | null = null;
    let mentions: MentionsToStore = { userIds: [], everyone: false };
    try {
      if (input.replyToMessageId != null) reply = await replyTarget(loaders, convId, input.replyToMessageId);
      mentions = await mentionsToStore(context.db, viewerId, admin, convId, input);
    } catch (refusal) {
      // A retry whose reply target was revoked or hidden, or whose mentioned
      // user left, since the first copy was stored still answers that copy
      // (the send below finds it).
      if ((await findByClientId(context.db, convId, viewerId, input.clientMsgId)) === null) throw refusal;
    }
    const outcome = await context.sends.send(context.db, convId, { senderId: viewerId, clientMsgId: input.clientMsgId, text: input.text, reply, mentions });
    if (outcome.kind === 'not-found') {
      throw conversationNotFound(input.conversationId);
    }
    if (outcome.kind === 'stored') {
      // The text was just written: answer it without reading it back.
      loaders.body.prime({ convId, seq: outcome.message.seq }, { kind: 'text', text: input.text });
      return { message: outcome.message, deduplicated: false };
    }
    // A retry answers the first copy through the view every read applies, so
    // it shows what message(id:) shows now: revoked or erased content, or
    // nothing once the sender cleared it, deleted it for themselves or it expired.
    const firstCopy = await loaders.message.load({ convId, seq: outcome.message.seq });
    if (firstCopy === null) {
      throw notFound(
        `Argument \`clientMsgId\` ${echo(input.clientMsgId)} was already used for a message you can no longer see (cleared, deleted for you or expired); nothing new was stored.`,
        'DEDUPLICATED_MESSAGE_NOT_VISIBLE',
      );
    }
    return { message: firstCopy, deduplicated: true };
  },

  revokeMessage: async (_root, { input }, context) => {
    const { viewerId } = viewerOf(context);
    const key = messageKeyOf(input.messageId);
    const outcome = await revokeMessage(context.db, context.publisher, viewerId, key.convId, key.seq, context.config.revokeWindowSeconds, context.retention);
    switch (outcome.kind) {
      case 'revoked':
      case 'already-revoked':
        return { message: outcome.message };
      case 'not-found':
        throw messageNotFound(input.messageId);
      case 'forbidden':
        throw forbidden(
          outcome.reason === 'window-passed'
            ? `Message ${echo(input.messageId)} can no longer be revoked: senders may revoke within ${context.config.revokeWindowSeconds} seconds of sending.`
            : `Message ${echo(input.messageId)} can only be revoked by its sender or the group's owner.`,
        );
    }
  },

  deleteMessagesForMe: async (_root, { input }, context) => {
    const { viewerId } = viewerOf(context);
    const keys = messageKeysOf('messageIds', input.messageIds, MAX_HIDE_IDS);
    const outcome = await hideMessages(context.db, viewerId, context.retention, keys);
    if (outcome.kind === 'not-found') {
      const id = messageGlobalId(outcome.key.convId, outcome.key.seq);
      throw messageNotFound(id, '; nothing was deleted');
    }
    return { deletedCount: outcome.newlyHidden };
  },

  clearHistory: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    const outcome = await clearHistory(context.db, viewerId, convId);
    if (outcome.kind === 'not-found') {
      throw conversationNotFound(input.conversationId);
    }
    return { conversation: await freshConversation(loaders, convId), clearedThroughSeq: outcome.throughSeq };
  },

  markRead: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    const outcome = await markRead(context.db, context.publisher, viewerId, convId, input.seq);
    if (outcome.kind === 'not-found') {
      throw conversationNotFound(input.conversationId);
    }
    if (outcome.kind === 'beyond-max') {
      throw badUserInput(`Argument \`seq\` must be at most the conversation's maxSeq ${outcome.maxSeq}, got ${input.seq}.`, 'seq');
    }
    return { conversation: await freshConversation(loaders, convId) };
  },
  markUnread: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const key = messageKeyOf(input.messageId);
    const outcome = await markUnread(context.db, context.publisher, viewerId, context.retention, key.convId, key.seq);
    if (outcome.kind === 'not-found') throw messageNotFound(input.messageId);
    return { conversation: await freshConversation(loaders, key.convId) };
  },

  setRetentionPolicy: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const convId = conversationUuid(input.conversationId);
    const policy = { days: input.days ?? null, maxMessages: input.maxMessages ?? null };
    const problem = policyProblem(policy, context.config.retention);
    if (problem !== null) throw badUserInput(problem.message, problem.field);
    const outcome = await setRetentionPolicy(context.db, viewerId, context.retention, convId, policy);
    if (outcome.kind === 'not-found') throw conversationNotFound(input.conversationId);
    if (outcome.kind === 'forbidden') throw forbidden("Only a group's owner can set its retention policy.");
    return { conversation: await freshConversation(loaders, convId) };
  },

  purgeMessages: async (_root, { input }, context) => {
    const { viewerId, admin } = viewerOf(context);
    const keys = messageKeysOf('messageIds', input.messageIds, MAX_PURGE_IDS);
    const outcome = await purgeMessages(context.db, context.publisher, viewerId, admin, context.retention, keys);
    switch (outcome.kind) {
      case 'purged':
        return { purgedCount: outcome.count };
      case 'not-found':
        throw messageNotFound(messageGlobalId(outcome.key.convId, outcome.key.seq), '; nothing was purged');
      case 'forbidden':
        throw forbidden(
          `Message ${echo(messageGlobalId(outcome.key.convId, outcome.key.seq))} can only be purged by its group's owner or an admin; nothing was purged.`,
        );
    }
  },

  eraseUser: async (_root, { input }, context) => {
    const { admin } = viewerOf(context);
    if (!admin) throw forbidden('Erasing a user needs the `admin` role in your token.');
    checkUserId('userId', input.userId);
    return { erasedCount: await eraseUser(context.db, context.publisher, input.userId, processArchive()?.store ?? null) };
  },
};

