/**
 * The change feed: what happened to messages a client may already hold.
 * Entries are numbered per conversation by `conversations.change_seq`, bumped
 * in the transaction that makes the change: the row lock it takes orders
 * commits, so an entry numbered below a reader's cursor can never commit
 * after the reader passed it.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { isoTime, type RetentionClock, visibleFloor } from './sqlFragments.ts';

export type ChangeKind = 'revoked' | 'purged' | 'hidden' | 'history_cleared' | 'retention_changed' | 'erased';

/** One entry to record. */
export interface ChangeEntry {
  convId: string;
  kind: ChangeKind;
  fromSeq: number;
  toSeq: number;
  /** The only member who sees it (hides, clears); null: everyone. */
  userId: string | null;
  /** `erased`: whose messages. */
  subjectId: string | null;
}

/**
 * Records `entries` (any conversations) in one statement: bumps each
 * conversation's counter by its number of entries and numbers them in order.
 * Run it inside the transaction that makes the change.
 */
export async function recordChanges(tx: SqlRunner, entries: readonly ChangeEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const column = <T>(pick: (e: ChangeEntry) => T) => sql.param(entries.map(pick));
  await tx.rows(sql`with e as (
      select * from unnest(${column((e) => e.convId)}::uuid[], ${column((e) => e.kind)}::text[],
        ${column((e) => e.fromSeq)}::int8[], ${column((e) => e.toSeq)}::int8[],
        ${column((e) => e.userId)}::text[], ${column((e) => e.subjectId)}::text[])
        with ordinality as e(conv_id, kind, from_seq, to_seq, user_id, subject_id, ord)),
    counts as (select conv_id, count(*) as n from e group by conv_id),
    bumped as (
      update conversations c set change_seq = c.change_seq + counts.n
      from counts where c.id = counts.conv_id
      returning c.id, c.change_seq - counts.n as base)
    insert into conversation_changes (conv_id, change_seq, kind, from_seq, to_seq, user_id, subject_id)
    select e.conv_id, b.base + row_number() over (partition by e.conv_id order by e.ord),
      e.kind, e.from_seq, e.to_seq, e.user_id, e.subject_id
    from e join bumped b on b.id = e.conv_id`);
}

/** One entry as a viewer reads it. */
export interface ChangeRow {
  changeSeq: number;
  kind: ChangeKind;
  fromSeq: number;
  toSeq: number;
  subjectId: string | null;
  /** ISO 8601, UTC. */
  at: string;
}

/** A page of the feed as read, with where the feed stands. */
export interface ChangePage {
  kind: 'changes';
  /** Up to `limit + 1` entries after the cursor, ascending. */
  entries: ChangeRow[];
  /** The newest entry number (of any visibility). */
  head: number;
  /** Entries at or below this were pruned. */
  prunedThrough: number;
  /** Everything at or below this seq is gone for the viewer (cleared or expired). */
  goneThroughSeq: number;
}

/**
 * Reads the entries after `afterChangeSeq` that `viewerId` sees (everyone's
 * and their own), up to `limit + 1`, with the feed's head, its pruned mark
 * and the viewer's floor, in one statement; `NotFound` when not a member.
 */
export async function readChanges(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  afterChangeSeq: number,
  limit: number,
): Promise<ChangePage | NotFound> {
  const rows = await db.rows<{
    head: number;
    pruned: number;
    gone_through: number;
    change_seq: number | null;
    kind: ChangeKind;
    from_seq: number;
    to_seq: number;
    subject_id: string | null;
    at: string;
  }>(sql`select mb.head, mb.pruned, mb.gone_through, e.*
    from (select mb.conv_id, c.change_seq as head, c.changes_pruned_through as pruned,
            ${visibleFloor('mb', 'c', retention)} as gone_through
          from members mb join conversations c on c.id = mb.conv_id
          where mb.conv_id = ${convId} and mb.user_id = ${viewerId}
          offset 0) mb
    left join lateral (
      select ch.change_seq, ch.kind, ch.from_seq, ch.to_seq, ch.subject_id, ${isoTime('ch.created_at')} as at
      from conversation_changes ch
      where ch.conv_id = mb.conv_id and ch.change_seq > ${afterChangeSeq}
        and (ch.user_id is null or ch.user_id = ${viewerId})
        -- Nothing about others' messages below the viewer's floor (cleared,
        -- from before they joined, expired), as on every read path; their own
        -- entries (hides, clears) and retention changes are theirs to see.
        and (ch.user_id is not null or ch.kind = 'retention_changed' or ch.to_seq > mb.gone_through)
      order by ch.change_seq limit ${limit + 1}) e on true
    order by e.change_seq`);
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  return {
    kind: 'changes',
    head: first.head,
    prunedThrough: first.pruned,
    goneThroughSeq: first.gone_through,
    entries: rows
      .filter((r) => r.change_seq !== null)
      .map((r) => ({ changeSeq: r.change_seq!, kind: r.kind, fromSeq: r.from_seq, toSeq: r.to_seq, subjectId: r.subject_id, at: r.at })),
  };
}

/**
 * Deletes feed entries older than `olderThan`, in batches of `batchSize`,
 * and raises each conversation's pruned mark so old cursors are refused
 * rather than silently skipping what was deleted. Answers how many went.
 */
export async function pruneChanges(db: SqlRunner, olderThan: Date, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await db.transaction(async (tx) => {
      const rows = await tx.rows<{ n: number }>(sql`with doomed as (
            select conv_id, change_seq from conversation_changes
            where created_at < ${olderThan.toISOString()}::timestamptz
            order by created_at limit ${batchSize}),
          gone as (
            delete from conversation_changes ch using doomed d
            where ch.conv_id = d.conv_id and ch.change_seq = d.change_seq
            returning ch.conv_id, ch.change_seq),
          marks as (
            update conversations c set changes_pruned_through = greatest(c.changes_pruned_through, m.through)
            from (select conv_id, max(change_seq) as through from gone group by conv_id) m
            where c.id = m.conv_id)
          select count(*)::int as n from gone`);
      return rows[0]?.n ?? 0;
    });
    total += removed;
    if (removed < batchSize) return total;
  }
}
