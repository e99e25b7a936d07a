/**
 * Keeping the inbox index (`user_inbox`, src/db/schema.ts) in step with
 * memberships and activity. The inbox orders a member's conversations by
 * `conversations.last_activity_at`; `user_inbox` holds that time per member,
 * keyed by user, so a page is one index range. Every change that moves it
 * writes the rows in the same statement or transaction, under the
 * conversation's row lock where the change takes one:
 *
 * - a send (src/store/sends.ts) copies the new activity into its members'
 *   rows, for a conversation that is not large;
 * - a member added to a new group or direct conversation gets a row with
 *   its activity (null if large); one who joins an existing group gets a
 *   row with null activity, read from the conversation until its next send
 *   (see `JoinedActivity`), and a group that grows past
 *   `LARGE_GROUP_MEMBERS` becomes large, its rows' activity nulled;
 * - a member removed or leaving loses their row.
 *
 * Every statement on `user_inbox` names its user ids (one, or those of a
 * conversation's members), so it routes by `user_id` when the table is
 * distributed or partitioned by user.
 */
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, userInbox } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { LARGE_GROUP_MEMBERS } from '../history/inboxFanout.ts';
import { type Aliased, bare, bareList, type Operand } from './sqlFragments.ts';
import { statement } from './statement.ts';

const ui = alias(userInbox, 'ui');
const c = alias(conversations, 'c');
const mb = alias(members, 'mb');

/**
 * When a member's inbox row is written, whether its activity is known:
 * `'known'` in a conversation this transaction created (no one can send
 * to it before it commits), `'at-read-time'` when joining an existing one.
 * A send's statement reads the members in the snapshot it started with,
 * which may predate a join that committed while the send waited for the
 * conversation's row lock: the newcomer's row is invisible to it and keeps
 * the activity from before the send. A row whose activity is null is read
 * from the conversation, as a large group's is, so it is right whatever
 * sends raced the join; the conversation's next send fills it in.
 */
type JoinedActivity = 'known' | 'at-read-time';

/**
 * The inbox rows of members just added to conversation `convId` (the bound
 * value, never a joined column, so the statement routes to its shard):
 * `added` is a relation (a CTE's name) with `user_id`. Each row gets its
 * conversation's activity (`'known'`) or null (`'at-read-time'`; always
 * null in a large conversation). An existing row (none should be) is
 * overwritten.
 */
export function indexAddedMembers(added: SQL, convId: Operand, activity: JoinedActivity): SQL {
  const at = activity === 'known' ? sql`case when ${c.large} then null else ${c.lastActivityAt} end` : sql`null::timestamptz`;
  return sql`insert into ${userInbox} (${bareList(userInbox.userId, userInbox.convId, userInbox.activityAt)})
      select a.user_id, ${c.id}, ${at}
      from ${added} a cross join ${conversations} ${c} where ${c.id} = ${convId}
      on conflict (${bareList(userInbox.userId, userInbox.convId)}) do update set ${bare(userInbox.activityAt)} = excluded.${bare(userInbox.activityAt)}`;
}

/** Deletes member `userId`'s inbox row for `convId`: beside the delete of their member row. */
export function unindexMember(convId: Operand, userId: Operand): SQL {
  return sql`delete from ${userInbox} where ${userInbox.userId} = ${userId} and ${userInbox.convId} = ${convId}`;
}

/**
 * Copies a send's new activity into the inbox rows of conversation
 * `convId`'s members (those its snapshot sees: see `JoinedActivity`).
 * `conv` is the CTE of the bumped conversation (returning
 * `last_activity_at` and `large`). Nothing for a large conversation, whose
 * members are not even read.
 * The members and rows are found by the bound `convId`, never by `conv`'s
 * column, which no partitioned or distributed table can prune by.
 */
export function fanOutActivity(conv: Aliased<typeof conversations>, convId: Operand): SQL {
  // The subquery on `conv` alone is a one-time filter, decided before any
  // member is read: joined by the bound id, the plan read every member (and
  // probed each one's inbox row) before `not large` turned them all away,
  // 32 ms of a send to a group of 10,000.
  return sql`update ${userInbox} ${ui} set ${bare(ui.activityAt)} = ${conv.lastActivityAt}
      from ${conv} join ${members} ${mb} on ${mb.convId} = ${convId}
      where not ${conv.large} and ${ui.userId} = ${mb.userId} and ${ui.convId} = ${convId}
        and (select not ${conv.large} from ${conv})`;
}

/**
 * `fanOutActivity` for a CTE `conv` of several bumped conversations, all
 * among the bound `convIds` (a uuid array): each one's members' inbox rows
 * follow its activity, nothing for the large ones. The members are found
 * by each `conv` row, so a large conversation's are never read, and within
 * the bound ids, so a partitioned or distributed table prunes by them.
 */
export function fanOutActivityOfMany(conv: Aliased<typeof conversations>, convIds: SQL): SQL {
  return sql`update ${userInbox} ${ui} set ${bare(ui.activityAt)} = ${conv.lastActivityAt}
      from ${conv} join ${members} ${mb} on ${mb.convId} = ${conv.id} and ${mb.convId} = any(${convIds})
      where not ${conv.large} and ${ui.userId} = ${mb.userId} and ${ui.convId} = ${conv.id}`;
}

/**
 * Marks group `convId` large once it has more than `LARGE_GROUP_MEMBERS`
 * members, and nulls its members' inbox activity (the inbox reads it from
 * the conversation from then on). Run after adding members, under the
 * group's row lock; a group already large costs one row read. A group never
 * goes back: one that shrank below the limit is still read at query time,
 * which is as right, and costs its members a probe per page.
 */
const markLargeIfGrown = statement<{ convId: string }>(
  (v) => sql`with grown as (
        update ${conversations} ${c} set ${bare(c.large)} = true
        where ${c.id} = ${v.convId} and not ${c.large}
          and (select count(*) from ${members} ${mb} where ${mb.convId} = ${v.convId}) > ${sql.raw(String(LARGE_GROUP_MEMBERS))}
        returning ${c.id})
      update ${userInbox} ${ui} set ${bare(ui.activityAt)} = null
      from grown join ${members} ${mb} on ${mb.convId} = ${v.convId}
      where ${ui.userId} = ${mb.userId} and ${ui.convId} = ${v.convId}`,
);

/** See `markLargeIfGrown`: call in the transaction that added members to `convId`, after adding them. */
export async function markLargeIfGrownPast(tx: SqlRunner, convId: string): Promise<void> {
  await tx.rows(markLargeIfGrown({ convId }));
}

const reindex = statement<{ convIds: string[] }>(
  (v) => sql`with sized as (
        update ${conversations} ${c} set ${bare(c.large)} = ${c.large}
          or (select count(*) from ${members} ${mb} where ${mb.convId} = ${c.id}) > ${sql.raw(String(LARGE_GROUP_MEMBERS))}
        where ${c.id} = any(${v.convIds}::uuid[])
        returning ${c.id}, ${c.large}, ${c.lastActivityAt})
      insert into ${userInbox} (${bareList(userInbox.userId, userInbox.convId, userInbox.activityAt)})
      select ${mb.userId}, ${mb.convId}, case when s.large then null else s.last_activity_at end
      from sized s join ${members} ${mb} on ${mb.convId} = s.id
      on conflict (${bareList(userInbox.userId, userInbox.convId)}) do update set ${bare(userInbox.activityAt)} = excluded.${bare(userInbox.activityAt)}`,
);

/**
 * The statement that writes the inbox rows of every member of `convIds`
 * from their members and activity, marking large the groups past the
 * limit, as migration 0016 did for the data it found: for conversations
 * and members written with plain SQL (the benchmark seed, the demo, test
 * fixtures), never by the server's own paths, which keep the rows as they
 * go. It adds and updates rows, and removes none. Run it with
 * `SqlRunner.rows` or drizzle's `execute`.
 */
export function reindexInbox(convIds: readonly string[]): SQL {
  return reindex({ convIds: [...convIds] });
}
