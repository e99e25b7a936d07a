/**
 * The inbox and read receipts: a member's conversations by last activity,
 * what the inbox shows of each (the last message they can see, how many are
 * unread) and how many members have read a message. Each function reads many
 * conversations or messages in ONE set-based statement (ids unnested, one
 * lateral index probe per conversation), so the request loaders batch a
 * whole page into it.
 */
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messages, userInbox } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { InboxPosition } from '../history/inboxCursor.ts';
import { UNREAD_CAP, UNREAD_SCAN_LIMIT, type UnreadCount, unreadCountOf } from '../history/unreadCount.ts';
import { amongConversations, keyedAmong } from './batchConversations.ts';
import { inKeyOrder } from './batch.ts';
import { conversationColumns } from './conversations.ts';
import { unreadMentionsOf } from './mentions.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { type ConversationRow, type MessageRow, type RawConversationRow, toConversationRow } from './rows.ts';
import {
  keyArrays,
  type KeyValues,
  keyValues,
  messageColumns,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  visibleFloor,
  visibleRun,
} from './sqlFragments.ts';
import { type Slots, statement } from './statement.ts';

/** One conversation of an inbox page and its place in the inbox. */
interface InboxEntry {
  conversation: ConversationRow;
  position: InboxPosition;
}

/** An inbox page: at most `size` entries, most recent activity first. */
export interface InboxPage {
  entries: InboxEntry[];
  /** Whether older conversations follow. */
  hasNextPage: boolean;
}

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const r = alias(members, 'r');

interface InboxValues extends RetentionValues {
  viewerId: string;
  limit: number;
  /** The cursor, unused on the first page. */
  afterMicros: number;
  afterConvId: string;
}

const ui = alias(userInbox, 'ui');
/** A conversation whose activity the inbox index does not hold, read at query time. */
const unsorted = alias(conversations, 'l');

/**
 * The inbox statement, from its first page (`after` false) or after a
 * cursor. The page's candidates are the viewer's first `limit` entries of
 * `user_inbox_order_idx` (conversations whose activity the index holds)
 * and every entry whose activity is read from the conversation
 * (`user_inbox_read_time_idx`: large groups, and groups joined since their
 * last send; one primary-key probe of the conversation each), merged by
 * activity; the columns are computed for the page's rows only.
 */
function inboxStatement(after: boolean) {
  return statement<InboxValues>((v) => {
    // Compared as timestamps: exact, since the cursor keeps microseconds, PostgreSQL's precision.
    const cursorAt = sql`(timestamptz 'epoch' + ${v.afterMicros}::int8 * interval '1 microsecond')`;
    const indexedRange = after ? sql`and (${ui.activityAt}, ${ui.convId}) < (${cursorAt}, ${v.afterConvId}::uuid)` : sql``;
    const unsortedRange = after ? sql`and (${unsorted.lastActivityAt}, ${unsorted.id}) < (${cursorAt}, ${v.afterConvId}::uuid)` : sql``;
    return sql`select ${conversationColumns(c, mb, v)},
        (extract(epoch from e.activity_at) * 1000000)::int8 as activity_micros
      from (
        select * from (
          (select ${ui.convId} as conv_id, ${ui.activityAt} as activity_at from ${userInbox} ${ui}
            where ${ui.userId} = ${v.viewerId} and ${ui.activityAt} is not null ${indexedRange}
            order by ${ui.activityAt} desc, ${ui.convId} desc
            limit ${v.limit})
          union all
          (select ${unsorted.id}, ${unsorted.lastActivityAt} from ${userInbox} ${ui}
            cross join lateral (select ${unsorted}.* from ${conversations} ${unsorted} where ${unsorted.id} = ${ui.convId} offset 0) ${unsorted}
            where ${ui.userId} = ${v.viewerId} and ${ui.activityAt} is null ${unsortedRange})
        ) candidates
        order by activity_at desc, conv_id desc
        limit ${v.limit}) e
      -- Fenced laterals keep these a primary-key probe per row of the page:
      -- joined, a custom plan hashed all of the viewer's member rows.
      cross join lateral (select ${mb}.* from ${members} ${mb} where ${mb.convId} = e.conv_id and ${mb.userId} = ${v.viewerId} offset 0) ${mb}
      cross join lateral (select ${c}.* from ${conversations} ${c} where ${c.id} = e.conv_id offset 0) ${c}
      order by e.activity_at desc, e.conv_id desc`;
  });
}

const firstInboxPage = inboxStatement(false);
const laterInboxPage = inboxStatement(true);

/**
 * The viewer's conversations strictly after `after` in inbox order
 * (`last_activity_at` desc, then id desc), `size` of them, from the inbox
 * index (src/store/inboxIndex.ts): `size + 1` entries of one index range,
 * plus a probe per large group the viewer is in (or joined since its last
 * send), whatever their number of memberships (reading every membership
 * and sorting took 230-290 ms for a member of 50,000 conversations). The per-conversation columns
 * (the retention probe among them) are computed for the page's rows only.
 */
export async function scanInbox(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  after: InboxPosition | null,
  size: number,
): Promise<InboxPage> {
  const values = { ...retentionValues(retention), viewerId, limit: size + 1 };
  const rows = await db.rows<RawConversationRow & { activity_micros: number }>(
    after === null
      ? firstInboxPage({ ...values, afterMicros: 0, afterConvId: '' })
      : laterInboxPage({ ...values, afterMicros: after.activityMicros, afterConvId: after.convId }),
  );
  return {
    entries: rows.slice(0, size).map((row) => ({
      conversation: toConversationRow(row),
      position: { activityMicros: row.activity_micros, convId: row.id },
    })),
    hasNextPage: rows.length > size,
  };
}

/** What the per-conversation statements bind: the viewer and the conversations asked about. */
interface MemberFloorValues extends RetentionValues {
  viewerId: string;
  convIds: string[];
}

/**
 * The viewer's member rows among `convIds`, each with its visible floor and
 * the conversation's `max_seq`, as relation `mb` (`conv_id`, `read_seq`,
 * `floor_seq`, `max_seq`). `offset 0` keeps the floor (a retention probe)
 * computed once per conversation, not once per step of the walks from it.
 * The member rows are a fenced lateral, one primary-key probe per id: as a
 * plain join, the generic plan read every membership of the viewer through
 * `members_user_idx` and hash-joined them to the ids (20 ms of a member of
 * 50,000 conversations' inbox page, against 1 ms for a member of 20).
 */
function memberFloors(v: Slots<MemberFloorValues>): SQL {
  return sql`(select ${mb.convId}, ${mb.readSeq}, ${visibleFloor(mb, c, v)} as floor_seq, ${c.maxSeq} as max_seq
      from unnest(${v.convIds}::uuid[]) as k(conv_id)
      cross join lateral (select ${mb}.* from ${members} ${mb} where ${mb.convId} = k.conv_id and ${mb.userId} = ${v.viewerId} offset 0) ${mb}
      join ${conversations} ${c} on ${c.id} = k.conv_id
      offset 0) ${mb}`;
}

const FLOOR = sql.raw('mb.floor_seq');
/** What a walk answers is aliased as `m`, so `messageColumns(m)` reads it. */
const WALKED = sql.identifier('m');

const lastMessages = statement<MemberFloorValues>(
  (v) => sql`select ${messageColumns(m)}
      from ${memberFloors(v)}
      cross join lateral (${visibleRun({ convId: mb.convId, viewerId: v.viewerId, floor: FLOOR, start: sql`mb.max_seq + 1`, order: 'desc', limit: sql`1` })}) ${WALKED}`,
);

/**
 * For each of `convIds`, in order, the newest message the viewer can see
 * there (revoked ones included: they show as revoked); null where they can
 * see none or are not a member. One walk of one message down from the
 * conversation's `max_seq` each, which jumps what the viewer hid in a probe
 * per range: a row-by-row scan read every hidden row above the answer
 * (3,901 rows for a member who hid the newest 3,900 of 4,000).
 */
export async function findLastMessages(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<(MessageRow | null)[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<MessageRow>(lastMessages({ ...retentionValues(retention), viewerId, convIds: [...convIds] }));
  return inKeyOrder(convIds, rows, (id) => id, (row) => row.convId);
}

const firstUnreads = statement<MemberFloorValues>(
  (v) => sql`select ${messageColumns(m)}
      from ${memberFloors(v)}
      cross join lateral (${visibleRun({
        convId: mb.convId,
        viewerId: v.viewerId,
        floor: FLOOR,
        start: sql`mb.read_seq`,
        order: 'asc',
        limit: sql`1`,
        notSentBy: v.viewerId,
      })}) ${WALKED}`,
);

/**
 * For each of `convIds`, in order, the oldest message the viewer can see
 * from others after their read cursor: where "new messages" begin; null
 * where nothing is unread or they are not a member. One walk of one
 * message up from the read cursor each, as the unread count walks.
 */
export async function findFirstUnreads(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<(MessageRow | null)[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<MessageRow>(firstUnreads({ ...retentionValues(retention), viewerId, convIds: [...convIds] }));
  return inKeyOrder(convIds, rows, (id) => id, (row) => row.convId);
}

const unreadCounts = statement<MemberFloorValues>(
  (v) => sql`select ${mb.convId} as conv_id, u.found
      from ${memberFloors(v)}
      cross join lateral (select count(*) as found from (${visibleRun({
        convId: mb.convId,
        viewerId: v.viewerId,
        floor: FLOOR,
        start: sql`mb.read_seq`,
        order: 'asc',
        limit: sql.raw(String(UNREAD_SCAN_LIMIT)),
        notSentBy: v.viewerId,
      })}) unread) u`,
);

/**
 * For each of `convIds`, in order, how many messages the viewer can see
 * from others after their read cursor, counting at most `UNREAD_SCAN_LIMIT`
 * (see src/history/unreadCount.ts); nothing unread where they are not a
 * member. Each count is a walk up from the read cursor that jumps what the
 * viewer hid, so it reads the messages it counts and the viewer's own among
 * them, never the hidden ones (a row-by-row scan read 3,980 rows for a
 * member who hid 3,900 of their unread messages).
 */
export async function countUnread(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<UnreadCount[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<{ conv_id: string; found: number }>(unreadCounts({ ...retentionValues(retention), viewerId, convIds: [...convIds] }));
  return inKeyOrder(convIds, rows, (id) => id, (row) => row.conv_id).map((row) => unreadCountOf(row?.found ?? 0));
}

const unreadMentionCounts = statement<MemberFloorValues>(
  (v) => sql`select ${mb.convId} as conv_id, u.found
      from ${memberFloors(v)}
      cross join lateral ${unreadMentionsOf(v.viewerId, UNREAD_CAP)} u`,
);

/**
 * For each of `convIds`, in order, how many messages from others after the
 * viewer's read cursor that they can see mention them by name or mention
 * everyone, counting at most `UNREAD_CAP` (past it the inbox shows 99); 0
 * where they are not a member. One statement for an inbox page: two index
 * ranges per conversation (`message_mentions_user_conv_idx`), each
 * stopping at the cap.
 */
export async function countUnreadMentions(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<number[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<{ conv_id: string; found: number }>(unreadMentionCounts({ ...retentionValues(retention), viewerId, convIds: [...convIds] }));
  return inKeyOrder(convIds, rows, (id) => id, (row) => row.conv_id).map((row) => row?.found ?? 0);
}

const sender = alias(members, 's');

/**
 * Each key's message (its sender; none when it is gone) beside a histogram
 * of read positions, per conversation, at or above that conversation's
 * lowest key: both go through one running sum from the highest position
 * down, so a key's sum counts the members whose read_seq is at or past it
 * (equal positions are peers of one window row). The histogram is one
 * index-only range of `members_read_seq_idx`; the old join of every member
 * to every key read members x messages rows (500,000 index entries for a
 * page of 50 in a group of 10,000). The sender is then taken back out,
 * when their own cursor reached the message, by a probe of their member row.
 * The batch's conversations are bound on every table it reads, so it reads
 * their shards alone (batchConversations.ts); messages and senders' member
 * rows are found by them (`keyedAmong`), the histogram keeps its own range.
 */
const readerCounts = statement<KeyValues>(
  (v) => sql`select t.conv_id, t.seq,
        t.at_or_above - coalesce((select (${sender.readSeq} >= t.seq)::int from ${members} ${sender}
          where ${keyedAmong(sender.convId, sql`t.conv_id`, v.convIds)} and ${sender.userId} = t.sender_id), 0) as readers
      from (select u.conv_id, u.pos as seq, u.sender_id,
          (sum(u.n) over (partition by u.conv_id order by u.pos desc))::int8 as at_or_above
        from (
          select k.conv_id, k.seq as pos, ${m.senderId} as sender_id, 0::int8 as n
            from ${keyArrays(v)} as k(conv_id, seq)
            join ${messages} ${m} on ${keyedAmong(m.convId, sql`k.conv_id`, v.convIds)} and ${m.seq} = k.seq
          union all
          select low.conv_id, h.read_seq, null, h.n
            from (select k.conv_id, min(k.seq) as seq from ${keyArrays(v)} as k(conv_id, seq) group by k.conv_id) low
            cross join lateral (select ${r.readSeq} as read_seq, count(*) as n from ${members} ${r}
              where ${r.convId} = low.conv_id and ${amongConversations(r.convId, v.convIds)} and ${r.readSeq} >= low.seq group by ${r.readSeq}) h
        ) u) t
      where t.sender_id is not null`,
);

/**
 * Read receipts: for each of `keys`, how many members other than its sender
 * have a read cursor at or past it, in the same order (0 for a message that
 * is gone). Callers pass keys the viewer may see. One statement whose cost
 * grows with the keys and the members who have read at or past the lowest
 * of them, not with their product.
 */
export async function countReaders(db: SqlRunner, keys: readonly MessageKey[]): Promise<number[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<{ conv_id: string; seq: number; readers: number }>(readerCounts(keyValues(keys)));
  return inKeyOrder(keys, rows, messageKeyString, (row) => messageKeyString({ convId: row.conv_id, seq: row.seq })).map((row) => row?.readers ?? 0);
}
