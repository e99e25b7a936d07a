/**
 * Cursors of the lists that are not message pages: a conversation's members
 * (join time and user id) and announcements (id). Opaque, checksummed, each
 * with its own prefix so one list's cursor is never taken for another's.
 */
import { decodeOpaque, encodeOpaque, isUuid, parseSeq } from './opaque.ts';
import { isAcceptedMillis } from './timeRange.ts';
import { isValidUserId } from './userId.ts';

const MEMBERS = 'mb1';
const ANNOUNCEMENTS = 'an1';

/** The cursor of a member of `convId` who joined at `joinedAt` (ISO, milliseconds). */
export function encodeMemberCursor(convId: string, joinedAt: string, userId: string): string {
  // Epoch milliseconds and base64url: fields free of the token's ':' separator.
  return encodeOpaque(MEMBERS, [convId, Date.parse(joinedAt), Buffer.from(userId, 'utf8').toString('base64url')]);
}

/** The position in `convId`'s member list a cursor names, or null when it is not one of its cursors. */
export function decodeMemberCursor(convId: string, cursor: string): { joinedAt: string; userId: string } | null {
  const fields = decodeOpaque(MEMBERS, 3, cursor);
  if (fields === null) return null;
  const [cursorConvId, millisText, userIdText] = fields as [string, string, string];
  const millis = parseSeq(millisText);
  const userId = Buffer.from(userIdText, 'base64url').toString('utf8');
  // Every field as a real member's cursor would carry it: a join time Date and
  // PostgreSQL can both hold, a user id that could exist, in our spelling
  // (bytes that are not UTF-8 would decode to U+FFFD and spell differently).
  if (!isUuid(cursorConvId) || cursorConvId !== convId || millis === null || !isAcceptedMillis(millis)) return null;
  if (!isValidUserId(userId) || Buffer.from(userId, 'utf8').toString('base64url') !== userIdText) return null;
  return { joinedAt: new Date(millis).toISOString(), userId };
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
