/**
 * Which conversations keep their activity in each member's inbox row. A
 * send to a conversation of `n` members rewrites `n` inbox rows, each a
 * new row version with an entry in two indexes (about 3 WAL records and
 * 270 bytes a member), so past some size a send would pay far more for the
 * inbox than for the message; a member's large conversations are instead
 * merged in when the inbox is read, one index entry and one conversation
 * probe each per page. Measured on a scratch database (issue 19's report),
 * the send statement's own execution was 0.38 ms with 9 WAL records; a
 * group of 5 added 0.3 ms and 15 records, a group of 100 added 2 to 9 ms
 * (the rewritten rows' old versions pile up between vacuums) and 390
 * records. 50 bounds a send's inbox work to a few times the message's own
 * while leaving a member few enough large groups to merge at read time.
 *
 * Correctness does not depend on the number: a group is large by its flag
 * (`conversations.large`), so changing this only moves which groups pay at
 * send time and which at read time, from their next membership change.
 */

/** A conversation with more members than this is large: its activity is read at query time. */
export const LARGE_GROUP_MEMBERS = 50;

/** Whether a conversation of `memberCount` members is large. */
export function isLargeGroup(memberCount: number): boolean {
  return memberCount > LARGE_GROUP_MEMBERS;
}
