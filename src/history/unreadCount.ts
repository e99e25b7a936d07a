/**
 * The inbox's unread count stops counting at a cap, so an inbox costs the
 * same however far behind the reader is: the store counts at most one
 * message past the cap, and finding that one means "more than we report".
 */

/** The largest unread count reported exactly. */
export const UNREAD_CAP = 99;

/** How many unread messages the store counts at most: one past the cap, to tell "exactly 99" from "more". */
export const UNREAD_SCAN_LIMIT = UNREAD_CAP + 1;

/** What `unreadCount` and `unreadCountCapped` answer. */
export interface UnreadCount {
  count: number;
  capped: boolean;
}

/** The unread count to report when the store found `found` (0 to `UNREAD_SCAN_LIMIT`) unread messages. */
export function unreadCountOf(found: number): UnreadCount {
  return found > UNREAD_CAP ? { count: UNREAD_CAP, capped: true } : { count: found, capped: false };
}
