/** `Conversation`: its fields and its two ways into the history. */
import { decodeCursor } from '../../history/cursor.ts';
import { conversationGlobalId } from '../../history/globalId.ts';
import { sliceAround, slicePage } from '../../history/pageSlice.ts';
import { checkAroundCount, pageWindow } from '../../history/pageWindow.ts';
import { scanAround, scanPage } from '../../store/pages.ts';
import { viewerOf } from '../context.ts';
import { badUserInput, echo, notFound } from '../errors.ts';
import type { ConversationResolvers } from '../generated/resolvers.ts';
import { conversationNotFound, conversationRow, messageKeyOf } from './lookups.ts';
import type { RequestContext } from '../context.ts';
import type { ConversationModel } from '../models.ts';

/** A cursor argument as a seq, or `BAD_USER_INPUT` naming the argument. */
function cursorSeq(convId: string, argumentName: 'after' | 'before', cursor: string | null | undefined): number | null {
  if (cursor === null || cursor === undefined) return null;
  const decoded = decodeCursor(convId, cursor);
  if (decoded.ok) return decoded.seq;
  const why = decoded.problem === 'other-conversation' ? 'belongs to another conversation' : 'is not a valid cursor';
  throw badUserInput(`Argument \`${argumentName}\` ${why}: got ${echo(cursor)}. Use a cursor from this conversation's pages.`, argumentName);
}

const gone = (convId: string) => conversationNotFound(conversationGlobalId(convId));
const row = (conversation: ConversationModel, context: RequestContext) => conversationRow(viewerOf(context).loaders, conversation);

export const Conversation: ConversationResolvers = {
  id: (conversation) => conversationGlobalId(conversation.id),
  kind: async (conversation, _args, context) =>
    (await row(conversation, context)).kind === 'direct' ? 'DIRECT' : 'GROUP',
  title: async (conversation, _args, context) => (await row(conversation, context)).title,
  maxSeq: async (conversation, _args, context) => (await row(conversation, context)).maxSeq,
  readSeq: async (conversation, _args, context) => (await row(conversation, context)).readSeq,

  messages: async (conversation, args, context) => {
    const { viewerId } = viewerOf(context);
    const result = pageWindow({
      first: args.first,
      last: args.last,
      afterSeq: cursorSeq(conversation.id, 'after', args.after),
      beforeSeq: cursorSeq(conversation.id, 'before', args.before),
    });
    if (!result.ok) throw badUserInput(result.problem.message, result.problem.argumentName);
    const scanned = await scanPage(context.db, viewerId, conversation.id, result.window);
    if (scanned === null) throw gone(conversation.id);
    return {
      convId: conversation.id,
      slice: slicePage(result.window, scanned.scanned, scanned.behindExists),
      latestSeq: scanned.latestSeq,
      anchor: null,
    };
  },

  messagesAround: async (conversation, args, context) => {
    const { viewerId } = viewerOf(context);
    const before = args.before ?? 20;
    const after = args.after ?? 20;
    const problem = checkAroundCount('before', before) ?? checkAroundCount('after', after);
    if (problem) throw badUserInput(problem.message, problem.argumentName);
    const anchor = messageKeyOf(args.messageId);
    const notHere = () => notFound(`Message ${echo(args.messageId)} is not a message of this conversation.`);
    if (anchor.convId !== conversation.id) throw notHere();
    const scanned = await scanAround(context.db, viewerId, conversation.id, anchor.seq, before, after);
    if (scanned === null) throw gone(conversation.id);
    // A seq never allocated is not a message of this conversation.
    if (anchor.seq > scanned.latestSeq) throw notHere();
    return {
      convId: conversation.id,
      slice: sliceAround(before, after, scanned.older, scanned.anchor, scanned.newer),
      latestSeq: scanned.latestSeq,
      anchor: { seq: anchor.seq, found: scanned.anchor !== null },
    };
  },
};
