/**
 * Which conversations keep their activity in each member's inbox row. A
 * send to a conversation of `n` members rewrites `n` inbox rows (one entry
 * in each of two indexes each), so past some size a send would pay more for
 * the inbox than for the message; a member's large conversations are
 * instead merged in when the inbox is read, one probe each. 100 keeps a
 * send's inbox writes below the cost of its own inserts for groups of up to
 * about 20 and within a few times that at 100 (measured in the report of
 * issue 19), and a member is in few groups that large.
 */

/** A conversation with more members than this is large: its activity is read at query time. */
export const LARGE_GROUP_MEMBERS = 100;

/** Whether a conversation of `memberCount` members is large. */
export function isLargeGroup(memberCount: number): boolean {
  return memberCount > LARGE_GROUP_MEMBERS;
}
