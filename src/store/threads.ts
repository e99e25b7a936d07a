/**
 * Replies and threads: a reply is an ordinary message that also names the
 * message it answers (`reply_to_seq`) and its thread's root
 * (`thread_root_seq`; threads are one level deep). A thread is read like a
 * page, in one statement, through the thread index (conv_id,
 * thread_root_seq, seq) with the viewer's view applied row by row, and
 * counts its replies' read receipts in that statement when asked, as a
 * message page does (pageReceipts.ts); counts are batched for a whole page
 * of roots.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messages, threadReads } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { PageWindow } from '../history/pageWindow.ts';
import { amongConversations, inBatch, keyedAmong } from './batchConversations.ts';
import { recordChanges } from './changes.ts';
import { inKeyOrder } from './batch.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { withReadCounts } from './pageReceipts.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  type ActorMessageValues,
  actorMessage,
  bare,
  bareList,
  keyArrays,
  keyValues,
  type KeyValues,
  messageColumns,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  sameConversation,
  visibleFloor,
  visibleTo,
} from './sqlFragments.ts';
import { statement } from './statement.ts';

const m = alias(messages, 'm');
const n = alias(messages, 'n');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const b = alias(messageBodies, 'b');
const tr = alias(threadReads, 'tr');

/** A page of a thread as scanned: rows in scan order, up to `size + 1`, and the warm bodies of those rows. */
export interface ScannedThread {
  kind: 'thread';
  scanned: MessageRow[];
  /** A visible reply lies beyond the cursor. */
  behindExists: boolean;
  warmTexts: Map<number, string>;
  /** Each scanned reply's read count, by seq, when the scan was asked for them; else empty. */
  readCounts: Map<number, number>;
}

interface ThreadValues extends RetentionValues {
  viewerId: string;
  convId: string;
  rootSeq: number;
  cursorSeq: number;
  limit: number;
}

/**
 * The member row with the viewer's floor, then the replies past the cursor
 * in `order`, each with its warm body, and its read count when `receipts`.
 */
function threadStatement(order: 'asc' | 'desc', cursor: boolean, receipts: boolean) {
  return statement<ThreadValues>((v) => {
    const past = order === 'asc' ? sql`${m.seq} > ${v.cursorSeq}` : cursor ? sql`${m.seq} < ${v.cursorSeq}` : sql`true`;
    const behind = !cursor
      ? sql`false`
      : sql`exists (select 1 from ${messages} ${n} where ${n.convId} = ${v.convId} and ${n.threadRootSeq} = ${v.rootSeq}
          and ${order === 'asc' ? sql`${n.seq} <= ${v.cursorSeq}` : sql`${n.seq} >= ${v.cursorSeq}`}
          and ${visibleTo(n, v.viewerId, sql.raw('mb.floor_seq'), v.convId)})`;
    const page = sql`select ${behind} as behind_exists, p.*,
        (select ${b.text} from ${messageBodies} ${b} where ${b.convId} = ${v.convId} and ${b.seq} = p.seq) as body_text
      from (select ${mb.convId} as conv_id, ${visibleFloor(mb, c, v, v.convId)} as floor_seq
            from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
            where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId} offset 0) mb
      left join lateral (
        select ${messageColumns(m)} from ${messages} ${m}
        where ${m.convId} = ${v.convId} and ${m.threadRootSeq} = ${v.rootSeq} and ${past}
          and ${visibleTo(m, v.viewerId, sql.raw('mb.floor_seq'), v.convId)}
        order by ${m.seq} ${sql.raw(order)} limit ${v.limit}) p on true`;
    return receipts ? withReadCounts(page, v.convId, order) : sql`${page} order by p.seq ${sql.raw(order)}`;
  });
}

/** The thread statements, by whether they count receipts (a thread page asking for `readCount`). */
const threadPages = (receipts: boolean) => ({
  forward: threadStatement('asc', true, receipts),
  backward: threadStatement('desc', true, receipts),
  newest: threadStatement('desc', false, receipts),
});
const plainThreads = threadPages(false);
const threadsWithReceipts = threadPages(true);

/**
 * Scans one page of the thread rooted at `rootSeq`, with each reply's read
 * count when `receipts`; `NotFound` when the viewer is not a member.
 */
export async function scanThread(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  rootSeq: number,
  window: PageWindow,
  receipts = false,
): Promise<ScannedThread | NotFound> {
  const values = { ...retentionValues(retention), viewerId, convId, rootSeq, limit: window.size + 1 };
  const threads = receipts ? threadsWithReceipts : plainThreads;
  const query =
    window.direction === 'forward'
      ? threads.forward({ ...values, cursorSeq: window.afterSeq })
      : window.beforeSeq !== null
        ? threads.backward({ ...values, cursorSeq: window.beforeSeq })
        : threads.newest({ ...values, cursorSeq: 0 });
  const rows = await db.rows<Partial<MessageRow> & { behind_exists: boolean; body_text: string | null; readers?: number | null }>(query);
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  const present = rows.filter((row) => row.seq != null);
  const warmTexts = new Map<number, string>();
  const readCounts = new Map<number, number>();
  for (const row of present) {
    if (row.body_text !== null) warmTexts.set(row.seq!, row.body_text);
    if (row.readers != null) readCounts.set(row.seq!, row.readers);
  }
  return { kind: 'thread', behindExists: first.behind_exists, warmTexts, readCounts, scanned: present.map((row) => messageRowOf(row as MessageRow)) };
}

/** The most a thread's unread count counts before it stops. */
const THREAD_UNREAD_CAP = 99;

/**
 * The batch's conversations bound on every table and lookup beside the
 * key's own, so it reads their shards alone (batchConversations.ts): a
 * correlated probe by `k.conv_id` alone cannot be pruned. Replies and the
 * member row are found by the bound ids (`keyedAmong`), so the thread index
 * and the member's primary key stay the only ranges worth reading.
 */
const threadCounts = statement<KeyValues & RetentionValues & { viewerId: string; cap: number }>((v) => {
  const key = inBatch(sql`k.conv_id`, v.convIds);
  const visible = visibleTo(m, v.viewerId, sql.raw('f.floor_seq'), inBatch(m.convId, v.convIds));
  return sql`select k.conv_id as "convId", k.seq,
        (select count(*)::int from ${messages} ${m}
          where ${keyedAmong(m.convId, sql`k.conv_id`, v.convIds)} and ${m.threadRootSeq} = k.seq and ${visible}) as replies,
        (select count(*)::int from (select 1 from ${messages} ${m}
          where ${keyedAmong(m.convId, sql`k.conv_id`, v.convIds)} and ${m.threadRootSeq} = k.seq
            and ${m.seq} > greatest(f.read_seq, coalesce((select ${tr.readSeq} from ${threadReads} ${tr}
                  where ${sameConversation(tr.convId, key)} and ${tr.rootSeq} = k.seq and ${tr.userId} = ${v.viewerId}), 0))
            and ${m.senderId} <> ${v.viewerId}
            and ${visible}
          limit ${v.cap}) u) as unread
      from ${keyArrays(v)} as k(conv_id, seq)
      cross join lateral (select ${mb.readSeq} as read_seq, ${visibleFloor(mb, c, v, inBatch(c.id, v.convIds))} as floor_seq
        from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId} and ${amongConversations(c.id, v.convIds)}
        where ${keyedAmong(mb.convId, sql`k.conv_id`, v.convIds)} and ${mb.userId} = ${v.viewerId} offset 0) f`;
});

/** A root's reply count and the viewer's unread replies in its thread. */
export interface ThreadCounts extends MessageKey {
  replies: number;
  /** Capped at `THREAD_UNREAD_CAP`. */
  unread: number;
}

/**
 * For each of `keys` (messages the viewer may see), in order: how many
 * replies of its thread the viewer can see, and how many of those from
 * others lie above both their conversation read position and their read
 * position in the thread (up to the cap). A message that is not a root has
 * no replies: 0 and 0. One statement for all.
 */
export async function countThreads(db: SqlRunner, viewerId: string, retention: RetentionClock, keys: readonly MessageKey[]): Promise<ThreadCounts[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<ThreadCounts>(threadCounts({ ...keyValues(keys), ...retentionValues(retention), viewerId, cap: THREAD_UNREAD_CAP }));
  return inKeyOrder(keys, rows, messageKeyString, messageKeyString).map((row, i) => row ?? { ...keys[i]!, replies: 0, unread: 0 });
}

/** What marking a thread read did. */
export type ThreadReadOutcome = { kind: 'marked'; root: MessageRow } | NotFound | { kind: 'not-root' } | { kind: 'beyond-max'; maxSeq: number };

const findRoot = statement<ActorMessageValues>((v) => sql`select ${messageColumns(m)}, ${c.maxSeq} as max_seq ${actorMessage(mb, c, m, v)}`);

const moveThreadRead = statement<{ viewerId: string; convId: string; rootSeq: number; readSeq: number }>(
  (v) => sql`insert into ${threadReads} (${bareList(threadReads.convId, threadReads.rootSeq, threadReads.userId, threadReads.readSeq)})
      values (${v.convId}, ${v.rootSeq}, ${v.viewerId}, ${v.readSeq})
      on conflict (${bareList(threadReads.convId, threadReads.rootSeq, threadReads.userId)})
      do update set ${bare(threadReads.readSeq)} = greatest(${threadReads.readSeq}, excluded.${bare(threadReads.readSeq)})
      where ${threadReads.readSeq} < excluded.${bare(threadReads.readSeq)}
      returning 1`,
);

/**
 * Moves `viewerId`'s read position in the thread rooted at `root` forward
 * to `seq` (never back), in one transaction with a `thread_read` change for
 * their other devices. The root must be a message they can see that is not
 * itself a reply.
 */
export async function markThreadRead(db: SqlRunner, viewerId: string, retention: RetentionClock, root: MessageKey, seq: number): Promise<ThreadReadOutcome> {
  return db.transaction(async (tx): Promise<ThreadReadOutcome> => {
    const [found] = await tx.rows<MessageRow & { max_seq: number }>(findRoot({ actorId: viewerId, convId: root.convId, seq: root.seq, ...retentionValues(retention) }));
    if (found === undefined) return NOT_FOUND;
    if (found.threadRootSeq !== null) return { kind: 'not-root' };
    if (seq > found.max_seq) return { kind: 'beyond-max', maxSeq: found.max_seq };
    const moved = await tx.rows(moveThreadRead({ viewerId, convId: root.convId, rootSeq: root.seq, readSeq: seq }));
    if (moved.length > 0) {
      await recordChanges(tx, [{ convId: root.convId, kind: 'thread_read', fromSeq: root.seq, toSeq: root.seq, userId: viewerId, subjectId: null }]);
    }
    return { kind: 'marked', root: messageRowOf(found) };
  });
}
