/**
 * The change feed: what happened to messages a client may already hold.
 * Entries are numbered per conversation by `conversations.change_seq`, bumped
 * in the transaction that makes the change: the row lock it takes orders
 * commits, so an entry numbered below a reader's cursor can never commit
 * after the reader passed it.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversationChanges, conversations, members } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { bare, bareList, isoTime, type RetentionClock, type RetentionValues, retentionValues, selectList, visibleFloor } from './sqlFragments.ts';
import { statement } from './statement.ts';

const c = alias(conversations, 'c');
const mb = alias(members, 'mb');
const ch = alias(conversationChanges, 'ch');

export type ChangeKind = 'revoked' | 'purged' | 'hidden' | 'history_cleared' | 'retention_changed' | 'erased' | 'edited' | 'reactions_changed' | 'thread_read' | 'starred' | 'unstarred' | 'pinned' | 'unpinned';

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

/** Change entries as a statement binds them: one array per field. */
interface EntryValues {
  convIds: string[];
  kinds: ChangeKind[];
  fromSeqs: number[];
  toSeqs: number[];
  userIds: (string | null)[];
  subjectIds: (string | null)[];
}

const record = statement<EntryValues>(
  (v) => sql`with e as (
      select * from unnest(${v.convIds}::uuid[], ${v.kinds}::text[], ${v.fromSeqs}::int8[], ${v.toSeqs}::int8[],
        ${v.userIds}::text[], ${v.subjectIds}::text[])
        with ordinality as e(conv_id, kind, from_seq, to_seq, user_id, subject_id, ord)),
    counts as (select conv_id, count(*) as n from e group by conv_id),
    bumped as (
      update ${conversations} ${c} set ${bare(c.changeSeq)} = ${c.changeSeq} + counts.n
      from counts where ${c.id} = counts.conv_id
      returning ${c.id} as id, ${c.changeSeq} - counts.n as base)
    insert into ${conversationChanges} (${bareList(
      conversationChanges.convId,
      conversationChanges.changeSeq,
      conversationChanges.kind,
      conversationChanges.fromSeq,
      conversationChanges.toSeq,
      conversationChanges.userId,
      conversationChanges.subjectId,
    )})
    select e.conv_id, b.base + row_number() over (partition by e.conv_id order by e.ord),
      e.kind, e.from_seq, e.to_seq, e.user_id, e.subject_id
    from e join bumped b on b.id = e.conv_id
    returning ${conversationChanges.convId} as conv_id, ${conversationChanges.changeSeq} as change_seq,
      ${conversationChanges.fromSeq} as from_seq, ${conversationChanges.toSeq} as to_seq`,
);

/** An entry as recorded: where it is and the number it got. */
export interface RecordedChange {
  convId: string;
  changeSeq: number;
  fromSeq: number;
  toSeq: number;
}

/**
 * Records `entries` (any conversations) in one statement: bumps each
 * conversation's counter by its number of entries and numbers them in order.
 * Run it inside the transaction that makes the change. Answers the entries
 * recorded with their numbers, ascending (the live notices of revokes and
 * purges carry them).
 */
export async function recordChanges(tx: SqlRunner, entries: readonly ChangeEntry[]): Promise<RecordedChange[]> {
  if (entries.length === 0) return [];
  const rows = await tx.rows<{ conv_id: string; change_seq: number; from_seq: number; to_seq: number }>(
    record({
      convIds: entries.map((e) => e.convId),
      kinds: entries.map((e) => e.kind),
      fromSeqs: entries.map((e) => e.fromSeq),
      toSeqs: entries.map((e) => e.toSeq),
      userIds: entries.map((e) => e.userId),
      subjectIds: entries.map((e) => e.subjectId),
    }),
  );
  return rows
    .map((r) => ({ convId: r.conv_id, changeSeq: r.change_seq, fromSeq: r.from_seq, toSeq: r.to_seq }))
    .sort((a, b) => a.changeSeq - b.changeSeq);
}

/** One entry as a viewer reads it. */
export interface ChangeRow extends Pick<typeof conversationChanges.$inferSelect, 'changeSeq' | 'fromSeq' | 'toSeq' | 'subjectId'> {
  kind: ChangeKind;
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

const feedPage = statement<RetentionValues & { viewerId: string; convId: string; afterChangeSeq: number; limit: number }>(
  (v) => sql`select mb.head, mb.pruned, mb.gone_through, e.*
    from (select ${mb.convId}, ${c.changeSeq} as head, ${c.changesPrunedThrough} as pruned,
            ${visibleFloor(mb, c, v, v.convId)} as gone_through
          from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
          where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}
          offset 0) mb
    left join lateral (
      select ${selectList<ChangeRow>({
        changeSeq: ch.changeSeq,
        kind: sql<ChangeKind>`${ch.kind}`,
        fromSeq: ch.fromSeq,
        toSeq: ch.toSeq,
        subjectId: ch.subjectId,
        at: isoTime(ch.createdAt),
      })}
      from ${conversationChanges} ${ch}
      where ${ch.convId} = ${v.convId} and ${ch.changeSeq} > ${v.afterChangeSeq}
        and (${ch.userId} is null or ${ch.userId} = ${v.viewerId})
        -- Nothing about others' messages below the viewer's floor (cleared,
        -- from before they joined, expired), as on every read path; their own
        -- entries (hides, clears) and retention changes are theirs to see.
        and (${ch.userId} is not null or ${ch.kind} = 'retention_changed' or ${ch.toSeq} > mb.gone_through)
      order by ${ch.changeSeq} limit ${v.limit}) e on true
    order by e."changeSeq"`,
);

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
  const rows = await db.rows<{ head: number; pruned: number; gone_through: number } & { [Field in keyof ChangeRow]: ChangeRow[Field] | null }>(
    feedPage({ ...retentionValues(retention), viewerId, convId, afterChangeSeq, limit: limit + 1 }),
  );
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  return {
    kind: 'changes',
    head: first.head,
    prunedThrough: first.pruned,
    goneThroughSeq: first.gone_through,
    entries: rows
      .filter((r) => r.changeSeq !== null)
      .map((r) => ({ changeSeq: r.changeSeq!, kind: r.kind!, fromSeq: r.fromSeq!, toSeq: r.toSeq!, subjectId: r.subjectId, at: r.at! })),
  };
}

const pruneBatch = statement<{ olderThan: string; batchSize: number }>(
  (v) => sql`with doomed as (
            select ${ch.convId} as conv_id, ${ch.changeSeq} as change_seq from ${conversationChanges} ${ch}
            where ${ch.createdAt} < ${v.olderThan}::timestamptz
            order by ${ch.createdAt} limit ${v.batchSize}),
          gone as (
            delete from ${conversationChanges} ${ch} using doomed d
            where ${ch.convId} = d.conv_id and ${ch.changeSeq} = d.change_seq
            returning ${ch.convId} as conv_id, ${ch.changeSeq} as change_seq),
          marks as (
            update ${conversations} ${c} set ${bare(c.changesPrunedThrough)} = greatest(${c.changesPrunedThrough}, m.through)
            from (select conv_id, max(change_seq) as through from gone group by conv_id) m
            where ${c.id} = m.conv_id)
          select count(*)::int as n from gone`,
);

/**
 * Deletes feed entries older than `olderThan`, in batches of `batchSize`,
 * and raises each conversation's pruned mark so old cursors are refused
 * rather than silently skipping what was deleted. Answers how many went.
 */
export async function pruneChanges(db: SqlRunner, olderThan: Date, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await db.transaction(async (tx) => {
      const rows = await tx.rows<{ n: number }>(pruneBatch({ olderThan: olderThan.toISOString(), batchSize }));
      return rows[0]?.n ?? 0;
    });
    total += removed;
    if (removed < batchSize) return total;
  }
}
