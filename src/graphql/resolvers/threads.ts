/**
 * Replies and threads: what a reply points at (`replyTo`, `threadRoot`),
 * a root's thread (`replies`, `replyCount`, `threadUnreadCount`) and
 * `markThreadRead`. Every lookup goes through the per-request loaders, so a
 * page of messages costs one statement per kind whatever its size; a
 * thread's replies that ask for `readCount` get it from their own statement.
 */
import { encodeCursor } from '../../history/cursor.ts';
import { slicePage } from '../../history/pageSlice.ts';
import { pageWindow } from '../../history/pageWindow.ts';
import { conversationGlobalId } from '../../history/globalId.ts';
import { markThreadRead, scanThread } from '../../store/threads.ts';
import { viewerOf } from '../context.ts';
import { carryReadCounts, connectionAsksForReadCount } from '../readCounts.ts';
import { primeWarmText } from '../warmTexts.ts';
import { messageEdges } from '../messageEdges.ts';
import { badUserInput, echo } from '../errors.ts';
import type { MessageResolvers, MutationResolvers, ThreadConnectionResolvers } from '../generated/resolvers.ts';
import { cursorSeq } from './conversation.ts';
import { conversationNotFound, messageKeyOf, messageNotFound } from './lookups.ts';

export const messageThreadFields: Pick<MessageResolvers, 'replyTo' | 'replyToUnavailable' | 'threadRoot' | 'replyCount' | 'replies' | 'threadUnreadCount'> = {
  replyTo: (message, _args, context) =>
    message.replyToSeq === null ? null : viewerOf(context).loaders.message.load({ convId: message.convId, seq: message.replyToSeq }),
  replyToUnavailable: async (message, _args, context) =>
    message.replyToSeq !== null && (await viewerOf(context).loaders.message.load({ convId: message.convId, seq: message.replyToSeq })) === null,
  threadRoot: (message, _args, context) =>
    message.threadRootSeq === null ? null : viewerOf(context).loaders.message.load({ convId: message.convId, seq: message.threadRootSeq }),
  // A reply is never a root: no statement for it.
  replyCount: async (message, _args, context) =>
    message.threadRootSeq !== null ? 0 : (await viewerOf(context).loaders.threads.load({ convId: message.convId, seq: message.seq })).replies,
  threadUnreadCount: async (message, _args, context) =>
    message.threadRootSeq !== null ? 0 : (await viewerOf(context).loaders.threads.load({ convId: message.convId, seq: message.seq })).unread,
  replies: async (message, args, context, info) => {
    const { viewerId, loaders } = viewerOf(context);
    const result = pageWindow(
      {
        first: args.first,
        last: args.last,
        afterSeq: cursorSeq(message.convId, 'after', args.after),
        beforeSeq: cursorSeq(message.convId, 'before', args.before),
      },
      'replies',
    );
    if (!result.ok) throw badUserInput(result.problem.message, result.problem.argumentName);
    const { window } = result;
    const requestSeq = window.direction === 'forward' ? (window.afterSeq > 0 ? window.afterSeq : null) : window.beforeSeq;
    if (message.threadRootSeq !== null) return { convId: message.convId, slice: { rows: [], hasPreviousPage: false, hasNextPage: false }, requestSeq };
    const receipts = connectionAsksForReadCount(info);
    const scanned = await scanThread(context.db, viewerId, context.retention, message.convId, message.seq, window, receipts);
    if (scanned.kind === 'not-found') throw conversationNotFound(conversationGlobalId(message.convId));
    for (const row of scanned.scanned) {
      const text = scanned.warmTexts.get(row.seq);
      if (text !== undefined && row.revokedAt === null) primeWarmText(loaders, row, text);
    }
    const slice = slicePage(window, scanned.scanned, scanned.behindExists);
    carryReadCounts(slice.rows, scanned.readCounts);
    return { convId: message.convId, slice, requestSeq };
  },
};

export const ThreadConnection: ThreadConnectionResolvers = {
  edges: (thread) => messageEdges(thread.slice.rows),
  pageInfo: (thread) => {
    // An empty page keeps the position it was asked from, as message pages do,
    // so a client's stored cursor is never replaced by null.
    const at = (row: { seq: number } | undefined) => {
      const seq = row?.seq ?? thread.requestSeq;
      return seq === null ? null : encodeCursor(thread.convId, seq);
    };
    return {
      hasPreviousPage: thread.slice.hasPreviousPage,
      hasNextPage: thread.slice.hasNextPage,
      startCursor: at(thread.slice.rows[0]),
      endCursor: at(thread.slice.rows.at(-1)),
    };
  },
};

export const threadMutations: Pick<MutationResolvers, 'markThreadRead'> = {
  markThreadRead: async (_root, { input }, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const key = messageKeyOf(input.messageId);
    const outcome = await markThreadRead(context.db, viewerId, context.retention, key, input.seq);
    switch (outcome.kind) {
      case 'marked':
        loaders.threads.clear(key);
        return { message: outcome.root };
      case 'not-found':
        throw messageNotFound(input.messageId);
      case 'not-root':
        throw badUserInput(`Message ${echo(input.messageId)} is a reply; pass the id of its thread's root.`, 'messageId');
      case 'beyond-max':
        throw badUserInput(`Argument \`seq\` must be at most the conversation's maxSeq ${outcome.maxSeq}, got ${input.seq}.`, 'seq');
    }
  },
};
