/**
 * The retention purge: deletes what reads already treat as gone (seqs at or
 * below a conversation's `expiredThrough`), to reclaim space. Reads never
 * wait for it, so it works in short batches, each its own transaction, and
 * never touches the `conversations` row that sends lock. It keeps no state
 * of its own: every step recomputes from what is stored, so a pass that
 * stopped half way (crash, shutdown) is finished by the next one, and a pass
 * with nothing to do deletes nothing.
 *
 * Retention records no change-feed entries: clients learn the cut-off from
 * `goneThroughSeq`, which moved when the messages expired, not when they
 * were deleted.
 *
 * Archived messages go the same way: their index rows here, and the record
 * of each archive segment left with no live message in the same batch
 * (archive/emptySegments.ts); its object, and segments only partly expired,
 * are the archiver's next run's (archive/rewrite.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { dropEmptySegments } from '../archive/emptySegments.ts';
import { conversations, messageBodies, messageEdits, messageHideRanges, messageMentions, messagePins, messageReactions, messages, messageStars, threadReads } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { expiredThrough, type RetentionClock, type RetentionValues, retentionValues } from './sqlFragments.ts';
import { statement } from './statement.ts';

const c = alias(conversations, 'c');
const m = alias(messages, 'm');
const b = alias(messageBodies, 'b');
const h = alias(messageHideRanges, 'h');
const ed = alias(messageEdits, 'ed');
const rx = alias(messageReactions, 'rx');
const tr = alias(threadReads, 'tr');
const st = alias(messageStars, 'st');
const pn = alias(messagePins, 'pn');
const mn = alias(messageMentions, 'mn');

/** Conversations looked at per scan statement: bounds one statement's time however many conversations there are. */
const SCAN_CHUNK = 1000;
/** Below every uuid: where the scan starts. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** What was removed from one conversation. */
export interface ConversationPurge {
  convId: string;
  messages: number;
  /** "Deleted for me" ranges removed with them (every seq of each at or below the cut-off). */
  hides: number;
  /** The seq through which the conversation is now purged. */
  throughSeq: number;
}

export interface PurgeOptions {
  /** Messages per transaction. */
  batchSize: number;
  /** Called once per conversation that had something to remove, after it is done. */
  onConversation?(report: ConversationPurge): void;
  /** Called after each committed batch with the messages deleted so far in this pass. Throwing stops the pass. */
  onBatch?(deletedSoFar: number): void;
  /**
   * After each batch, rest this many times as long as the batch took (0: no
   * rest), leaving the database's CPU and disk to requests: a purge at full
   * speed takes a core to itself.
   */
  restRatio?: number;
  /** Stops the pass before its next batch (shutdown); what is left is the next pass's. */
  signal?: AbortSignal;
}

/** What one pass removed. */
export interface PurgeTotals {
  conversations: number;
  messages: number;
  hides: number;
}

/**
 * Deletes every expired message (index row, body, hides) at `clock`, one
 * conversation after another, in transactions of at most
 * `options.batchSize` messages. Safe to run while the server serves and
 * while another pass runs (each deletes what the other has not).
 */
export async function purgeExpired(db: SqlRunner, clock: RetentionClock, options: PurgeOptions): Promise<PurgeTotals> {
  const totals: PurgeTotals = { conversations: 0, messages: 0, hides: 0 };
  let after = FIRST_ID;
  for (;;) {
    const chunk = await scanChunk(db, clock, after);
    for (const { id, through } of chunk.due) {
      if (options.signal?.aborted) return totals;
      const report = await purgeConversation(db, clock, id, through, options, totals);
      if (report.messages + report.hides > 0) {
        totals.conversations += 1;
        options.onConversation?.(report);
      }
    }
    if (chunk.lastId === null) return totals;
    after = chunk.lastId;
  }
}

const scan = statement<RetentionValues & { after: string }>(
  (v) => sql`select ${c.id} as id, x.through,
      x.through > 0 and (
        (select min(${m.seq}) from ${messages} ${m} where ${m.convId} = ${c.id}) <= x.through
        or exists (select 1 from ${messageHideRanges} ${h} where ${h.convId} = ${c.id} and ${h.toSeq} <= x.through)) as due
    from (select * from ${conversations} where ${conversations.id} > ${v.after}::uuid order by ${conversations.id} limit ${SCAN_CHUNK}) ${c}
    cross join lateral (select case
      when least(${c.retentionDays}, ${v.serverDays}::int) is null
        and least(${c.retentionMaxMessages}, ${v.serverMaxMessages}::int) is null then 0
      else ${expiredThrough(c, v)} end as through) x
    order by ${c.id}`,
);

/**
 * The next `SCAN_CHUNK` conversations after `after` (by id) and, of those,
 * the ones with something to purge: a stored message at or below the
 * cut-off (the lowest stored seq is one primary-key probe), or a hidden
 * range wholly at or below it. Conversations under no policy skip both probes.
 */
async function scanChunk(
  db: SqlRunner,
  clock: RetentionClock,
  after: string,
): Promise<{ lastId: string | null; due: { id: string; through: number }[] }> {
  const rows = await db.rows<{ id: string; through: number; due: boolean }>(scan({ ...retentionValues(clock), after }));
  return {
    lastId: rows.length < SCAN_CHUNK ? null : rows.at(-1)!.id,
    due: rows.filter((r) => r.due).map((r) => ({ id: r.id, through: r.through })),
  };
}

/**
 * Purges one conversation through `through` (its cut-off when scanned):
 * batches of its lowest seqs, then hidden ranges left without a message.
 */
async function purgeConversation(
  db: SqlRunner,
  clock: RetentionClock,
  convId: string,
  through: number,
  options: PurgeOptions,
  totals: PurgeTotals,
): Promise<ConversationPurge> {
  const report: ConversationPurge = { convId, messages: 0, hides: 0, throughSeq: through };
  // Each batch starts above the last one's top: the index entries of rows
  // already deleted stay until vacuum, and scanning past them from the
  // conversation's first seq on every batch would make a long purge quadratic.
  let after = 0;
  for (;;) {
    if (options.signal?.aborted) return report;
    const started = performance.now();
    const batch = await deleteBatch(db, clock, convId, through, after, options.batchSize);
    report.messages += batch.messages;
    report.hides += batch.hides;
    totals.messages += batch.messages;
    totals.hides += batch.hides;
    if (batch.through !== null) report.throughSeq = batch.through;
    if (batch.top === null) break;
    options.onBatch?.(totals.messages);
    await rest((performance.now() - started) * (options.restRatio ?? 0), options.signal);
    if (batch.found < options.batchSize) break;
    after = batch.top;
  }
  const orphans = await deleteOrphanHides(db, convId, through, options.batchSize);
  report.hides += orphans;
  totals.hides += orphans;
  return report;
}

/** Waits `ms`, or until `signal` is aborted. */
async function rest(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

const batch = statement<RetentionValues & { convId: string; through: number; after: number; batchSize: number }>(
  (v) => sql`with
        bound as (select least(${v.through}::int8, ${expiredThrough(c, v, v.convId)}) as through from ${conversations} ${c} where ${c.id} = ${v.convId}),
        doomed as (
          select ${m.seq} as seq from ${messages} ${m}
          where ${m.convId} = ${v.convId} and ${m.seq} > ${v.after}::int8 and ${m.seq} <= (select through from bound)
          order by ${m.seq} limit ${v.batchSize}),
        span as (select count(*)::int as found, max(seq) as top from doomed),
        bodies as (
          delete from ${messageBodies} ${b} using span
          where ${b.convId} = ${v.convId} and ${b.seq} > ${v.after}::int8 and ${b.seq} <= span.top),
        versions as (
          delete from ${messageEdits} ${ed} using span
          where ${ed.convId} = ${v.convId} and ${ed.seq} > ${v.after}::int8 and ${ed.seq} <= span.top),
        reactions as (
          delete from ${messageReactions} ${rx} using span
          where ${rx.convId} = ${v.convId} and ${rx.seq} > ${v.after}::int8 and ${rx.seq} <= span.top),
        stars as (
          delete from ${messageStars} ${st} using span
          where ${st.convId} = ${v.convId} and ${st.seq} > ${v.after}::int8 and ${st.seq} <= span.top),
        pins as (
          delete from ${messagePins} ${pn} using span
          where ${pn.convId} = ${v.convId} and ${pn.seq} > ${v.after}::int8 and ${pn.seq} <= span.top),
        mentions as (
          delete from ${messageMentions} ${mn} using span
          where ${mn.convId} = ${v.convId} and ${mn.seq} > ${v.after}::int8 and ${mn.seq} <= span.top),
        thread_reads as (
          delete from ${threadReads} ${tr} using span
          where ${tr.convId} = ${v.convId} and ${tr.rootSeq} > ${v.after}::int8 and ${tr.rootSeq} <= span.top),
        hides as (
          delete from ${messageHideRanges} ${h} using span
          where ${h.convId} = ${v.convId} and ${h.toSeq} <= span.top
          returning 1),
        gone as (
          delete from ${messages} ${m} using span
          where ${m.convId} = ${v.convId} and ${m.seq} > ${v.after}::int8 and ${m.seq} <= span.top
          returning 1)
      select (select through from bound) as through, span.found, span.top,
        (select count(*)::int from gone) as messages, (select count(*)::int from hides) as hides
      from span`,
);

/**
 * One transaction: the lowest `batchSize` seqs above `after` and at or below
 * the cut-off, with their bodies, every hidden range wholly at or below
 * the batch's top (all of whose messages are now gone; a range reaching
 * above it stays whole, its expired part hiding nothing) and the records of
 * archive segments left with no live message. The cut-off is
 * taken again, capped by the scan's: an owner who lengthened the policy
 * since the scan brought those messages back into view, and they must stay.
 */
async function deleteBatch(
  db: SqlRunner,
  clock: RetentionClock,
  convId: string,
  through: number,
  after: number,
  batchSize: number,
): Promise<{ found: number; top: number | null; through: number | null; messages: number; hides: number }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.rows<{ through: number | null; found: number; top: number | null; messages: number; hides: number }>(
      batch({ ...retentionValues(clock), convId, through, after, batchSize }),
    );
    if (row!.top !== null) await dropEmptySegments(tx, [{ convId, fromSeq: after + 1, toSeq: row!.top }]);
    return row!;
  });
}

const orphanHides = statement<{ convId: string; through: number; batchSize: number }>(
  (v) => sql`with doomed as (
          select ${h.userId} as user_id, ${h.fromSeq} as from_seq from ${messageHideRanges} ${h}
          where ${h.convId} = ${v.convId} and ${h.toSeq} <= ${v.through}::int8
            and ${h.toSeq} < coalesce((select min(${m.seq}) from ${messages} ${m} where ${m.convId} = ${v.convId}), ${v.through}::int8 + 1)
          limit ${v.batchSize}),
        gone as (
          delete from ${messageHideRanges} ${h} using doomed d
          where ${h.convId} = ${v.convId} and ${h.userId} = d.user_id and ${h.fromSeq} = d.from_seq
          returning 1)
      select count(*)::int as n from gone`,
);

/**
 * Hidden ranges wholly at or below `through` and below the lowest stored
 * message: their messages are gone, so they hide nothing. Batches take the
 * ranges below what they delete; these are the rare ones a batch could not
 * see, such as a hide that committed while the batch deleting its messages
 * ran. Answers how many went.
 */
async function deleteOrphanHides(db: SqlRunner, convId: string, through: number, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.rows<{ n: number }>(orphanHides({ convId, through, batchSize }));
    total += row!.n;
    if (row!.n < batchSize) return total;
  }
}
