/**
 * Global object ids for the `Node` interface. Conversations and messages get
 * opaque ids that carry their type; a message id carries its conversation and
 * seq, so looking one up is a primary-key read inside one conversation.
 * User ids are the token's `sub` as it is: anything that is not one of our
 * opaque ids names a user, if it could be one (userId.ts).
 */
import { decodeOpaque, encodeOpaque, encodeOpaqueAfter, isUuid, type OpaqueHead, opaqueHead, parseSeq } from './opaque.ts';
import { seqTokenMaker } from './tokenRuns.ts';
import { isValidUserId } from './userId.ts';

/** What a global id points at. */
export type GlobalRef =
  | { type: 'Conversation'; convId: string }
  | { type: 'Message'; convId: string; seq: number }
  | { type: 'Announcement'; id: number }
  | { type: 'User'; userId: string }
  /** Shaped like one of our ids but edited or cut, or no valid user id: names nothing. */
  | { type: 'Invalid' };

const CONVERSATION = 'C';
const MESSAGE = 'M';
const ANNOUNCEMENT = 'A';

/** The id of announcement `id`. */
export function announcementGlobalId(id: number): string {
  return encodeOpaque(ANNOUNCEMENT, [id]);
}

/** The announcement number behind an announcement id, or null if `id` is not one. */
function decodeAnnouncementId(id: string): number | null {
  const fields = decodeOpaque(ANNOUNCEMENT, 1, id);
  const number = fields === null ? null : parseSeq(fields[0]!);
  return number === null || number < 1 ? null : number;
}

/** The id of conversation `convId`. */
export function conversationGlobalId(convId: string): string {
  return encodeOpaque(CONVERSATION, [convId]);
}

/** The id of message `seq` in conversation `convId`: a page's ids are made a run at a time (tokenRuns.ts). */
export function messageGlobalId(convId: string, seq: number): string {
  return messageIds(convId, seq);
}

/** One message id alone. */
function singleMessageId(convId: string, seq: number): string {
  // `M:<uuid>:` is 39 bytes, so its encoding is shared (opaqueHead says when a head can be); the last conversation's is kept, as ids asked one by one often name one.
  if (convId !== lastMessageHead.convId) lastMessageHead = { convId, head: opaqueHead(MESSAGE, [convId]) };
  const { head } = lastMessageHead;
  return head === null ? encodeOpaque(MESSAGE, [convId, seq]) : encodeOpaqueAfter(head, [seq]);
}
let lastMessageHead: { convId: string; head: OpaqueHead | null } = { convId: '', head: null };

const messageIds = seqTokenMaker((convId) => `${MESSAGE}:${convId}:`, singleMessageId);

/** The conversation uuid behind a conversation id, or null if `id` is not one. */
export function decodeConversationId(id: string): string | null {
  const fields = decodeOpaque(CONVERSATION, 1, id);
  if (fields === null || !isUuid(fields[0]!)) return null;
  return fields[0]!;
}

/** The (conversation, seq) behind a message id, or null if `id` is not one. */
export function decodeMessageId(id: string): { convId: string; seq: number } | null {
  const fields = decodeOpaque(MESSAGE, 2, id);
  if (fields === null) return null;
  const [convId, seqText] = fields as [string, string];
  const seq = parseSeq(seqText);
  if (!isUuid(convId) || seq === null || seq < 1) return null;
  return { convId, seq };
}

/** What `id` names, for `node(id)`. */
export function decodeGlobalId(id: string): GlobalRef {
  const convId = decodeConversationId(id);
  if (convId !== null) return { type: 'Conversation', convId };
  const message = decodeMessageId(id);
  if (message !== null) return { type: 'Message', ...message };
  const announcement = decodeAnnouncementId(id);
  if (announcement !== null) return { type: 'Announcement', id: announcement };
  if (looksLikeOurs(id) || !isValidUserId(id)) return { type: 'Invalid' };
  return { type: 'User', userId: id };
}

/**
 * Our ids decode to `C:` or `M:`, the start of a uuid and printable ASCII. An id of that shape
 * that fails to decode was edited or cut: it names nothing. Anything else
 * (user ids such as "TTrinh" whose bytes merely start the same) names a user.
 */
const OUR_SHAPE = /^[CM]:[0-9a-f]{8}-[\x21-\x7e]*$/;

function looksLikeOurs(id: string): boolean {
  // Well-checksummed but around a non-uuid or seq 0: made by hand, names nothing.
  if (decodeOpaque(CONVERSATION, 1, id) !== null || decodeOpaque(MESSAGE, 2, id) !== null || decodeOpaque(ANNOUNCEMENT, 1, id) !== null) {
    return true;
  }
  if (!/^[A-Za-z0-9_-]+$/.test(id)) return false;
  return OUR_SHAPE.test(Buffer.from(id, 'base64url').toString('latin1'));
}
