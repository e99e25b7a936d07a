/** `Conversation`: its fields, its ways into the history, and its change feed. */
import type { GraphQLResolveInfo } from 'graphql';
import { decodeChangeCursor, decodeCursor } from '../../history/cursor.ts';
import { conversationGlobalId } from '../../history/globalId.ts';
import { spanWithinCut } from '../../history/pageCut.ts';
import { cutExtraRow, type PageSlice, sliceAround, slicePage } from '../../history/pageSlice.ts';
import { pageSpan, type SeqRange, type SpanInput } from '../../history/pageSpan.ts';
import { aroundCount, aroundSides, type PageWindow, pageWindow } from '../../history/pageWindow.ts';
import { LIST_SIZES } from '../../history/listSizes.ts';
import { effectivePolicy } from '../../history/retention.ts';
import { readChanges } from '../../store/changes.ts';
import { findFirstVisibleAt, scanAround, scanPage } from '../../store/pages.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo, notFound } from '../errors.ts';
import type { ConversationResolvers } from '../generated/resolvers.ts';
import type { MessageRow } from '../../store/rows.ts';
import { carryReadCounts, connectionAsksForReadCount } from '../readCounts.ts';
import { readPageBodies } from './pageBodies.ts';
import { keysetSize } from './keyset.ts';
import { conversationNotFound, conversationRow, messageKeyOf } from './lookups.ts';
import type { RequestContext } from '../context.ts';
import type { ConnectionModel, ConversationModel } from '../models.ts';


/** A page cursor argument (of `messages`, or of a thread's `replies`) as a seq, or `BAD_USER_INPUT` naming the argument. */
export function cursorSeq(convId: string, argumentName: 'after' | 'before', cursor: string | null | undefined): number | null {
  if (cursor === null || cursor === undefined) return null;
  const decoded = decodeCursor(convId, cursor);
  if (decoded.ok) return decoded.seq;
  const why = decoded.problem === 'other-conversation' ? 'belongs to another conversation' : 'is not a valid cursor';
  throw badUserInput(`Argument \`${argumentName}\` ${why}: got ${echo(cursor)}. Use a cursor from this conversation's pages.`, argumentName);
}

const gone = (convId: string) => conversationNotFound(conversationGlobalId(convId));

/** A change-feed cursor argument as an entry number, or `BAD_USER_INPUT`. */
function changeCursorSeq(convId: string, cursor: string | null | undefined): number | null {
  if (cursor === null || cursor === undefined) return null;
  const decoded = decodeChangeCursor(convId, cursor);
  if (decoded.ok) return decoded.seq;
  const why = decoded.problem === 'other-conversation' ? 'belongs to another conversation' : 'is not a change cursor';
  throw badUserInput(`Argument \`after\` ${why}: got ${echo(cursor)}. Use a \`changesCursor\` or a \`cursor\` from this conversation.`, 'after');
}

/** The seqs a page accounts for (src/history/pageSpan.ts), stopping where it was cut short. */
function spanOf(slice: PageSlice<MessageRow>, latestSeq: number, from: SpanInput['from'], cut: ConnectionModel['cut']): SeqRange | null {
  const span = pageSpan({ seqs: slice.rows.map((r) => r.seq), hasPreviousPage: slice.hasPreviousPage, hasNextPage: slice.hasNextPage, latestSeq, from });
  return spanWithinCut(span, cut?.at ?? null);
}

/**
 * The page around `anchorSeq` as a connection; shared by `messagesAround`
 * and `messagesAt`. `NOT_FOUND` when the viewer is not a member.
 */
async function aroundConnection(
  context: RequestContext,
  info: GraphQLResolveInfo,
  viewerId: string,
  convId: string,
  anchorSeq: number,
  before: number,
  after: number,
): Promise<ConnectionModel & { latestSeq: number }> {
  const receipts = connectionAsksForReadCount(info);
  const scanned = await scanAround(context.db, viewerId, context.retention, convId, anchorSeq, before, after, receipts);
  if (scanned.kind === 'not-found') throw gone(convId);
  const { slice, cut } = await readPageBodies(context, info, {
    slice: sliceAround(before, after, scanned.older, scanned.anchor, scanned.newer),
    warmTexts: scanned.warmTexts,
    archivedThroughSeq: scanned.archivedThroughSeq,
    keep: { kind: 'around', anchorSeq },
  });
  carryReadCounts(slice.rows, scanned.readCounts);
  return {
    convId,
    slice,
    latestSeq: scanned.latestSeq,
    changeSeq: scanned.changeSeq,
    anchor: { seq: anchorSeq, found: scanned.anchor !== null },
    requestSeq: null,
    cut,
    span: spanOf(slice, scanned.latestSeq, { kind: 'around', anchorSeq }, cut),
  };
}

/**
 * The page around message `messageId` of conversation `convId`: `before`
 * older and `after` newer visible messages; shared by `messagesAround` and
 * `messages(around:)`. `NOT_FOUND` for a message of another conversation or
 * a seq never allocated.
 */
async function jumpToMessage(
  context: RequestContext,
  info: GraphQLResolveInfo,
  convId: string,
  messageId: string,
  before: number,
  after: number,
): Promise<ConnectionModel & { latestSeq: number }> {
  const anchor = messageKeyOf(messageId);
  const notHere = () => notFound(`Message ${echo(messageId)} is not a message of this conversation.`);
  if (anchor.convId !== convId) throw notHere();
  const connection = await aroundConnection(context, info, viewerOf(context).viewerId, convId, anchor.seq, before, after);
  // A seq never allocated is not a message of this conversation.
  if (anchor.seq > connection.latestSeq) throw notHere();
  return connection;
}

/** `before`/`after` of a jump, checked; `BAD_USER_INPUT` naming the argument otherwise. */
function aroundCounts(args: { before?: number | null; after?: number | null }): { before: number; after: number } {
  const before = aroundCount('before', args.before);
  if (!before.ok) throw badUserInput(before.problem.message, before.problem.argumentName);
  const after = aroundCount('after', args.after);
  if (!after.ok) throw badUserInput(after.problem.message, after.problem.argumentName);
  return { before: before.size, after: after.size };
}
/** One keyset page of `convId` as a connection; `NOT_FOUND` when the viewer is not a member. */
async function pageConnection(context: RequestContext, info: GraphQLResolveInfo, convId: string, window: PageWindow): Promise<ConnectionModel> {
  // A page whose edges ask for `readCount` has its statement count them: one round trip.
  const receipts = connectionAsksForReadCount(info);
  const scanned = await scanPage(context.db, viewerOf(context).viewerId, context.retention, convId, window, receipts);
  if (scanned.kind === 'not-found') throw gone(convId);
  const { slice, cut } = await readPageBodies(context, info, {
    slice: slicePage(window, scanned.scanned, scanned.behindExists),
    warmTexts: scanned.warmTexts,
    archivedThroughSeq: scanned.archivedThroughSeq,
    keep: { kind: window.direction === 'forward' ? 'oldest' : 'newest' },
  });
  carryReadCounts(slice.rows, scanned.readCounts);
  return {
    convId,
    slice,
    latestSeq: scanned.latestSeq,
    changeSeq: scanned.changeSeq,
    anchor: null,
    requestSeq: window.direction === 'forward' ? (window.afterSeq > 0 ? window.afterSeq : null) : window.beforeSeq,
    cut,
    span: spanOf(
      slice,
      scanned.latestSeq,
      window.direction === 'forward' ? { kind: 'forward', afterSeq: window.afterSeq } : { kind: 'backward', beforeSeq: window.beforeSeq },
      cut,
    ),
  };
}

const row = (conversation: ConversationModel, context: RequestContext) => conversationRow(viewerOf(context).loaders, conversation);

export const Conversation: ConversationResolvers = {
  id: (conversation) => conversationGlobalId(conversation.id),
  kind: async (conversation, _args, context) =>
    (await row(conversation, context)).kind === 'direct' ? 'DIRECT' : 'GROUP',
  title: async (conversation, _args, context) => (await row(conversation, context)).title,
  maxSeq: async (conversation, _args, context) => (await row(conversation, context)).maxSeq,
  readSeq: async (conversation, _args, context) => (await row(conversation, context)).readSeq,
  retentionPolicy: async (conversation, _args, context) => {
    const found = await row(conversation, context);
    return { ...effectivePolicy(context.config.retention, found.ownRetention), expiredThroughSeq: found.expiredThroughSeq };
  },

  messages: async (conversation, args, context, info) => {
    const { viewerId, loaders } = viewerOf(context);
    if (args.around != null && args.aroundFirstUnread === true) {
      throw badUserInput('Arguments `around` and `aroundFirstUnread` cannot be used together; centre the page on one message.', 'aroundFirstUnread');
    }
    // A jump to the first unread message, unless a cursor says where to page from.
    if (args.aroundFirstUnread === true && args.after == null && args.before == null) {
      const sides = aroundSides(args.first, args.last);
      if (!sides.ok) throw badUserInput(sides.problem.message, sides.problem.argumentName);
      const firstUnread = await loaders.firstUnread.load(conversation.id);
      if (firstUnread === null) {
        // Nothing unread (or not a member, which the page statement answers):
        // the newest page, as many messages as the jump would have shown.
        const size = Math.min(LIST_SIZES.messages.max, Math.max(1, sides.older + sides.newer));
        return { ...(await pageConnection(context, info, conversation.id, { direction: 'backward', size, beforeSeq: null })), firstUnreadSeq: null };
      }
      const jump = await aroundConnection(context, info, viewerId, conversation.id, firstUnread.seq, sides.older, sides.newer);
      return { ...jump, firstUnreadSeq: firstUnread.seq };
    }
    // A jump, unless a cursor says where to page from (see the schema).
    if (args.around != null && args.after == null && args.before == null) {
      const sides = aroundSides(args.first, args.last);
      if (!sides.ok) throw badUserInput(sides.problem.message, sides.problem.argumentName);
      return jumpToMessage(context, info, conversation.id, args.around, sides.older, sides.newer);
    }
    const result = pageWindow({
      first: args.first,
      last: args.last,
      afterSeq: cursorSeq(conversation.id, 'after', args.after),
      beforeSeq: cursorSeq(conversation.id, 'before', args.before),
    });
    if (!result.ok) throw badUserInput(result.problem.message, result.problem.argumentName);
    return pageConnection(context, info, conversation.id, result.window);
  },

  messagesAround: async (conversation, args, context, info) => {
    const { before, after } = aroundCounts(args);
    return jumpToMessage(context, info, conversation.id, args.messageId, before, after);
  },

  messagesAt: async (conversation, args, context, info) => {
    const { viewerId } = viewerOf(context);
    const { before, after } = aroundCounts(args);
    const found = await findFirstVisibleAt(context.db, viewerId, context.retention, conversation.id, args.time);
    if (found.kind === 'not-found') throw gone(conversation.id);
    // Nothing at or after `time`: centre on the position after the newest
    // message, which is the newest page, with `anchorFound` false.
    const anchorSeq = found.seq ?? found.latestSeq + 1;
    return aroundConnection(context, info, viewerId, conversation.id, anchorSeq, before, after);
  },

  changes: async (conversation, args, context) => {
    const { viewerId } = viewerOf(context);
    const first = keysetSize('changes', args.first);
    const after = changeCursorSeq(conversation.id, args.after);
    const page = await readChanges(context.db, viewerId, context.retention, conversation.id, after ?? 0, first);
    if (page.kind === 'not-found') throw gone(conversation.id);
    if (after !== null && after > page.head) {
      throw badUserInput(`Argument \`after\` is ahead of this conversation's change feed: got ${echo(args.after)}.`, 'after');
    }
    if (after !== null && after < page.prunedThrough) {
      throw badUserInput(
        'The change feed no longer reaches back to this cursor (old entries expire). Reload the conversation and continue from the new changesCursor.',
        'after',
        'CHANGES_EXPIRED',
      );
    }
    const { rows: changes, more: hasMore } = cutExtraRow(page.entries, first);
    return {
      convId: conversation.id,
      changes: changes.map((change) => ({ ...change, convId: conversation.id })),
      // Past the last entry returned, or, at the end, past everything this
      // viewer was not shown either (other members' own entries).
      cursorChangeSeq: hasMore ? changes.at(-1)!.changeSeq : page.head,
      hasMore,
      goneThroughSeq: page.goneThroughSeq,
    };
  },
};
