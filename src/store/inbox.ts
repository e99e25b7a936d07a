/**
 * The inbox and read receipts: a member's conversations by last activity,
 * what the inbox shows of each (the last message they can see, how many are
 * unread) and how many members have read a message. Each function reads many
 * conversations or messages in ONE set-based statement (ids unnested, one
 * lateral index probe per conversation), so the request loaders batch a
 * whole page into it.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { InboxPosition } from '../history/inboxCursor.ts';
import { UNREAD_SCAN_LIMIT, type UnreadCount, unreadCountOf } from '../history/unreadCount.ts';
import { inKeyOrder } from './batch.ts';
import { conversationColumns, type RawConversationRow, toConversationRow } from './conversations.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { type ConversationRow, type MessageRow, type RawMessageRow, toMessageRow } from './rows.ts';
import { keyArrays, messageColumns, type RetentionClock, visibleFloor, visibleTo } from './sqlFragments.ts';

/** One conversation of an inbox page and its place in the inbox. */
export interface InboxEntry {
  conversation: ConversationRow;
  position: InboxPosition;
}

/** An inbox page: at most `size` entries, most recent activity first. */
export interface InboxPage {
  entries: InboxEntry[];
  /** Whether older conversations follow. */
  hasNextPage: boolean;
}

/**
 * The viewer's conversations strictly after `after` in inbox order
 * (`last_activity_at` desc, then id desc), `size` of them. No index holds a
 * member's conversations in activity order, so this reads all of the
 * viewer's memberships through `members_user_idx`, probes each conversation
 * by primary key, and keeps the top `size + 1`; the per-conversation columns
 * (the retention probe among them) are computed after that sort, for the
 * page's rows only.
 */
export async function scanInbox(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  after: InboxPosition | null,
  size: number,
): Promise<InboxPage> {
  // Compared as timestamps (exact: the cursor keeps microseconds, PostgreSQL's
  // precision), so an index on (last_activity_at, id) could serve the range.
  const range =
    after === null
      ? sql.raw('true')
      : sql`(c.last_activity_at, c.id)
          < (timestamptz 'epoch' + ${after.activityMicros}::int8 * interval '1 microsecond', ${after.convId}::uuid)`;
  const rows = await db.rows<RawConversationRow & { activity_micros: number }>(sql`select ${conversationColumns(retention)},
        (extract(epoch from c.last_activity_at) * 1000000)::int8 as activity_micros
      from members mb
      -- A fenced lateral keeps this a primary-key probe per membership: as a
      -- plain join, a generic plan that overestimates the viewer's
      -- memberships hash-joins them against every conversation.
      cross join lateral (select c.* from conversations c where c.id = mb.conv_id offset 0) c
      where mb.user_id = ${viewerId} and ${range}
      order by c.last_activity_at desc, c.id desc
      limit ${size + 1}`);
  return {
    entries: rows.slice(0, size).map((r) => ({
      conversation: toConversationRow(r),
      position: { activityMicros: r.activity_micros, convId: r.id },
    })),
    hasNextPage: rows.length > size,
  };
}

/**
 * The viewer's member rows among `convIds`, each with its visible floor, as
 * relation `mb` (`conv_id`, `read_seq`, `floor_seq`). `offset 0` keeps the
 * floor (a retention probe) computed once per conversation, not once per
 * message the lateral scans test against it.
 */
function memberFloors(viewerId: string, retention: RetentionClock, convIds: readonly string[]): SQL {
  return sql`(select mb.conv_id, mb.read_seq, ${visibleFloor('mb', 'c', retention)} as floor_seq
      from unnest(${sql.param([...convIds])}::uuid[]) as k(conv_id)
      join members mb on mb.conv_id = k.conv_id and mb.user_id = ${viewerId}
      join conversations c on c.id = k.conv_id
      offset 0) mb`;
}

const FLOOR = sql.raw('mb.floor_seq');

/**
 * For each of `convIds`, in order, the newest message the viewer can see
 * there (revoked ones included: they show as revoked); null where they can
 * see none or are not a member. One backward probe of the primary key per
 * conversation, past any messages hidden from them.
 */
export async function findLastMessages(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<(MessageRow | null)[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<RawMessageRow>(sql`select ${messageColumns('m')}
      from ${memberFloors(viewerId, retention, convIds)}
      cross join lateral (select m.* from messages m
        where m.conv_id = mb.conv_id and ${visibleTo('m', viewerId, FLOOR)}
        order by m.seq desc limit 1) m`);
  return inKeyOrder(convIds, rows.map(toMessageRow), (id) => id, (row) => row.convId);
}

/**
 * For each of `convIds`, in order, how many messages the viewer can see
 * from others after their read cursor, counting at most `UNREAD_SCAN_LIMIT`
 * (see src/history/unreadCount.ts); nothing unread where they are not a
 * member. Each count is one forward range of the primary key from the read
 * cursor.
 */
export async function countUnread(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<UnreadCount[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<{ conv_id: string; found: number }>(sql`select mb.conv_id, u.found
      from ${memberFloors(viewerId, retention, convIds)}
      cross join lateral (select count(*) as found from (select from messages m
        where m.conv_id = mb.conv_id and m.seq > mb.read_seq and m.sender_id <> ${viewerId} and ${visibleTo('m', viewerId, FLOOR)}
        limit ${UNREAD_SCAN_LIMIT}) unread) u`);
  return inKeyOrder(convIds, rows, (id) => id, (row) => row.conv_id).map((row) => unreadCountOf(row?.found ?? 0));
}

/**
 * Read receipts: for each of `keys`, how many members other than its sender
 * have a read cursor at or past it, in the same order (0 for a message that
 * is gone). Callers pass keys the viewer may see.
 */
export async function countReaders(db: SqlRunner, keys: readonly MessageKey[]): Promise<number[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<{ conv_id: string; seq: number; readers: number }>(sql`select k.conv_id, k.seq, count(r.user_id) as readers
      from ${keyArrays(keys)} as k(conv_id, seq)
      join messages m on m.conv_id = k.conv_id and m.seq = k.seq
      left join members r on r.conv_id = k.conv_id and r.user_id <> m.sender_id and r.read_seq >= k.seq
      group by k.conv_id, k.seq`);
  return inKeyOrder(keys, rows, messageKeyString, (r) => messageKeyString({ convId: r.conv_id, seq: r.seq })).map((row) => row?.readers ?? 0);
}
