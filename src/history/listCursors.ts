/**
 * Cursors of the lists that are not message pages: a conversation's members
 * (join time and user id), announcements (id), a message's earlier versions
 * (version), a reaction's users (reaction time and user id) and the
 * viewer's starred messages (star time and message), their mentions (send
 * time and message) and a conversation's pins (pin time and seq). Opaque, checksummed, each
 * with its own prefix so one list's cursor is never taken for another's.
 */
import { decodeOpaque, decodeOpaqueWithTextLast, decodeScoped, encodeOpaque, encodeOpaqueAfterLead, isUuid, parseSeq, scopeTag, type TokenLead, tokenLead } from './opaque.ts';
import { isAcceptedMicros, parseAcceptedMillis } from './timeRange.ts';
import { isValidUserId } from './userId.ts';

const MEMBERS = 'mb3';
/** Members cursors before they spelled the user id as it is (base64url-encoded, inside the token's own base64url). */
const BASE64_USER_MEMBERS = 'mb2';
/** Members cursors before they named the conversation by its tag. */
const LEGACY_MEMBERS = 'mb1';
const ANNOUNCEMENTS = 'an1';

/**
 * The cursor of a member of `convId` who joined at `joinedMillis` (epoch
 * milliseconds, as the list orders members: MemberRow).
 */
export function encodeMemberCursor(convId: string, joinedMillis: number, userId: string): string {
  // The conversation by its tag, as page cursors name it (opaque.ts). The user
  // id last and as it is, ':' included (decodeOpaqueWithTextLast): encoded
  // into base64url on its own first, inside a token that is base64url again,
  // it made each cursor a third longer and cost a Buffer per edge.
  return encodeOpaqueAfterLead(memberLead(convId), `${joinedMillis}:${userId}`);
}

/** The lead of `convId`'s member cursors; the last one made is kept, as every edge of a list names the same conversation. */
function memberLead(convId: string): TokenLead {
  if (convId !== lastMemberLead.convId) lastMemberLead = { convId, lead: tokenLead(MEMBERS, [scopeTag(convId)]) };
  return lastMemberLead.lead;
}
let lastMemberLead = { convId: '', lead: tokenLead(MEMBERS, [scopeTag('')]) };

/**
 * The position in `convId`'s member list a cursor names, or null when it is
 * not one of its cursors. Cursors of the previous versions (the user id in
 * base64url; the whole conversation uuid) are still read.
 */
export function decodeMemberCursor(convId: string, cursor: string): { joinedMillis: number; userId: string } | null {
  const fields = currentMemberFields(convId, cursor) ?? earlierMemberFields(convId, cursor);
  if (fields === null) return null;
  // Every field as a real member's cursor would carry it: a join time Date and
  // PostgreSQL can both hold (before 1970 too: a member's join time is
  // whatever was stored), a user id that could exist.
  const millis = parseAcceptedMillis(fields.millisText);
  if (millis === null || !isValidUserId(fields.userId)) return null;
  return { joinedMillis: millis, userId: fields.userId };
}

interface MemberCursorFields {
  millisText: string;
  userId: string;
}

/** The fields of an `mb3` cursor of `convId`, or null. */
function currentMemberFields(convId: string, cursor: string): MemberCursorFields | null {
  const fields = decodeOpaqueWithTextLast(MEMBERS, 3, cursor);
  if (fields === null) return null;
  const [tag, millisText, userId] = fields as [string, string, string];
  return tag === scopeTag(convId) ? { millisText, userId } : null;
}

/** The fields of an `mb2` or `mb1` cursor of `convId`, or null. */
function earlierMemberFields(convId: string, cursor: string): MemberCursorFields | null {
  const decoded = decodeScoped(BASE64_USER_MEMBERS, LEGACY_MEMBERS, 3, cursor, convId);
  if (decoded === null || !decoded.wellFormedScope || !decoded.ownScope) return null;
  const [millisText, userIdText] = decoded.fields as [string, string];
  const userId = Buffer.from(userIdText, 'base64url').toString('utf8');
  // Bytes that are not UTF-8 would decode to U+FFFD and spell differently.
  if (Buffer.from(userId, 'utf8').toString('base64url') !== userIdText) return null;
  return { millisText, userId };
}

/** The cursor after announcement `id`. */
export function encodeAnnouncementCursor(id: number): string {
  return encodeOpaque(ANNOUNCEMENTS, [id]);
}

/** The announcement id a cursor names, or null when it is not an announcements cursor. */
export function decodeAnnouncementCursor(cursor: string): number | null {
  const fields = decodeOpaque(ANNOUNCEMENTS, 1, cursor);
  return fields === null ? null : parseSeq(fields[0]!);
}

const EDITS = 'ed1';
const REACTORS = 'rx1';

/** The cursor after version `version` of message `seq` of `convId` (its `edits` list). */
export function encodeEditCursor(convId: string, seq: number, version: number): string {
  return encodeOpaque(EDITS, [convId, seq, version]);
}

/** The version an `edits` cursor of message `seq` of `convId` names, or null when it is not one of that list's cursors. */
export function decodeEditCursor(convId: string, seq: number, cursor: string): number | null {
  const fields = decodeOpaque(EDITS, 3, cursor);
  if (fields === null) return null;
  const [cursorConvId, seqText, versionText] = fields as [string, string, string];
  const version = parseSeq(versionText);
  if (cursorConvId !== convId || parseSeq(seqText) !== seq || version === null || version > 2_147_483_647) return null;
  return version;
}

/** Where a user is in a reaction group's list: when they reacted (microseconds since the epoch) and who they are. */
export interface ReactorPosition {
  reactedMicros: number;
  userId: string;
}

/** The cursor after `position` in the users of `reaction` on message `seq` of `convId`. */
export function encodeReactorCursor(convId: string, seq: number, reaction: string, position: ReactorPosition): string {
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  return encodeOpaque(REACTORS, [convId, seq, b64(reaction), position.reactedMicros, b64(position.userId)]);
}

/** The position a reaction group's cursor names, or null when it is not a cursor of that group. */
export function decodeReactorCursor(convId: string, seq: number, reaction: string, cursor: string): ReactorPosition | null {
  const fields = decodeOpaque(REACTORS, 5, cursor);
  if (fields === null) return null;
  const [cursorConvId, seqText, reactionText, microsText, userText] = fields as [string, string, string, string, string];
  const micros = parseSeq(microsText);
  const userId = Buffer.from(userText, 'base64url').toString('utf8');
  if (cursorConvId !== convId || parseSeq(seqText) !== seq || Buffer.from(reactionText, 'base64url').toString('utf8') !== reaction) return null;
  if (micros === null || !isValidUserId(userId) || Buffer.from(userId, 'utf8').toString('base64url') !== userText) return null;
  return { reactedMicros: micros, userId };
}

/** Where a message is in a list across conversations ordered by a time (microseconds since the epoch), then conversation and seq. */
interface TimedMessagePosition {
  micros: number;
  convId: string;
  seq: number;
}

function encodeTimedMessageCursor(prefix: string, position: TimedMessagePosition): string {
  return encodeOpaque(prefix, [position.micros, position.convId, position.seq]);
}

function decodeTimedMessageCursor(prefix: string, cursor: string): TimedMessagePosition | null {
  const fields = decodeOpaque(prefix, 3, cursor);
  if (fields === null) return null;
  const [microsText, convId, seqText] = fields as [string, string, string];
  const micros = parseSeq(microsText);
  const seq = parseSeq(seqText);
  if (micros === null || !isAcceptedMicros(micros) || !isUuid(convId) || seq === null) return null;
  return { micros, convId, seq };
}

const STARS = 'st1';

/** Where a message is in its user's starred list: when it was starred (microseconds since the epoch) and which message. */
export interface StarPosition {
  starredMicros: number;
  convId: string;
  seq: number;
}

/** The cursor after `position` in the viewer's starred messages. */
export function encodeStarCursor(position: StarPosition): string {
  return encodeTimedMessageCursor(STARS, { micros: position.starredMicros, convId: position.convId, seq: position.seq });
}

/** The position a starred-list cursor names, or null when it is not one. */
export function decodeStarCursor(cursor: string): StarPosition | null {
  const position = decodeTimedMessageCursor(STARS, cursor);
  return position === null ? null : { starredMicros: position.micros, convId: position.convId, seq: position.seq };
}

const MENTIONS = 'mn1';

/** Where a message is in its reader's mentions: when it was sent (microseconds since the epoch) and which message. */
export interface MentionPosition {
  sentMicros: number;
  convId: string;
  seq: number;
}

/** The cursor after `position` in the viewer's mentions. */
export function encodeMentionCursor(position: MentionPosition): string {
  return encodeTimedMessageCursor(MENTIONS, { micros: position.sentMicros, convId: position.convId, seq: position.seq });
}

/** The position a mentions cursor names, or null when it is not one. */
export function decodeMentionCursor(cursor: string): MentionPosition | null {
  const position = decodeTimedMessageCursor(MENTIONS, cursor);
  return position === null ? null : { sentMicros: position.micros, convId: position.convId, seq: position.seq };
}

const PINS = 'pn1';

/** Where a pin is in its conversation's list: when it was pinned (microseconds since the epoch), then its seq. */
export interface PinPosition {
  pinnedMicros: number;
  seq: number;
}

/** The cursor after `position` in `convId`'s pinned messages. */
export function encodePinCursor(convId: string, position: PinPosition): string {
  return encodeOpaque(PINS, [convId, position.pinnedMicros, position.seq]);
}

/** The position a cursor of `convId`'s pins names, or null when it is not one. */
export function decodePinCursor(convId: string, cursor: string): PinPosition | null {
  const fields = decodeOpaque(PINS, 3, cursor);
  if (fields === null) return null;
  const [cursorConvId, microsText, seqText] = fields as [string, string, string];
  const pinnedMicros = parseSeq(microsText);
  const seq = parseSeq(seqText);
  if (cursorConvId !== convId || pinnedMicros === null || !isAcceptedMicros(pinnedMicros) || seq === null) return null;
  return { pinnedMicros, seq };
}
