/**
 * Inbox cursors. The inbox is ordered by last activity, newest first, with
 * the conversation id breaking ties, so a position is that pair. Activity is
 * carried in whole microseconds since the Unix epoch, PostgreSQL's own
 * precision: a cursor rounded to milliseconds would skip or repeat
 * conversations active within the same millisecond.
 */
import { decodeOpaque, encodeOpaque, isUuid, parseSeq } from './opaque.ts';
import { isAcceptedMicros } from './timeRange.ts';

/** A place in the inbox: just after the conversation with this activity and id. */
export interface InboxPosition {
  /** `conversations.last_activity_at` in microseconds since 1970-01-01T00:00:00Z. */
  activityMicros: number;
  convId: string;
}

const PREFIX = 'i1';

/** The cursor of `position`. */
export function encodeInboxCursor(position: InboxPosition): string {
  return encodeOpaque(PREFIX, [position.activityMicros, position.convId]);
}

/** The position a cursor made by `encodeInboxCursor` names, or null for anything else. */
export function decodeInboxCursor(cursor: string): InboxPosition | null {
  const fields = decodeOpaque(PREFIX, 2, cursor);
  if (fields === null) return null;
  const [microsText, convId] = fields as [string, string];
  const activityMicros = parseSeq(microsText);
  if (activityMicros === null || !isAcceptedMicros(activityMicros) || !isUuid(convId)) return null;
  return { activityMicros, convId };
}
