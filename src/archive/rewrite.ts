/**
 * The store's half of retention and erasure in the archive: every recorded
 * segment is checked against what PostgreSQL still serves, and one holding
 * texts nobody may read is deleted whole or rewritten (segmentFate.ts).
 * Purges and erasures only change the database (emptySegments.ts), so this
 * needs no record of what they did: it works from what is stored, and a run
 * that stopped half way is finished by the next one.
 *
 * A rewrite, in this order:
 *
 *   1. read the live seqs of the segment's range (one statement, no lock);
 *   2. read the old object, check it is the one recorded, keep the entries
 *      of live seqs, encode them as a new segment (its seq range is that of
 *      the kept entries, as readers expect) and write it under a new key;
 *   3. read it back: the same bytes, and they decode;
 *   4. one statement, its own transaction: point the record at the new
 *      object, only if the record still names the old one and the range
 *      still holds exactly the kept live messages; otherwise delete the new
 *      object and leave the segment to the next run;
 *   5. delete the old object.
 *
 * Before 4 commits the old object is recorded and whole; after it, the new
 * one is. An object a crash left unrecorded (the new one before 4, the old
 * one before 5) is removed by the archiver's cleanup of unrecorded objects.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { archiveSegments, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { bare, selectList } from '../store/sqlFragments.ts';
import { statement } from '../store/statement.ts';
import { segmentKey, UNRECORDED_LIMIT_MS } from './archiver.ts';
import { isLive, type SeqRange } from './emptySegments.ts';
import { decodeSegment, encodeSegment } from './segment.ts';
import { segmentFate } from './segmentFate.ts';
import type { SegmentStore } from './segmentStore.ts';

const s = alias(archiveSegments, 's');
const m = alias(messages, 'm');

/** Segments looked at per scan statement. */
const CHUNK = 200;
/** Below every uuid. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** A segment as recorded. */
interface RecordedSegment {
  convId: string;
  fromSeq: number;
  toSeq: number;
  key: string;
  bytes: number;
  count: number;
  checksum: string;
}

/** A point in the order above where the test-only fault hook is called. */
export type RewriteStep = 'written' | 'verified' | 'recorded';

export interface ReconcileOptions {
  /** Stops the run before its next segment; what is left is the next run's. */
  signal?: AbortSignal;
  /** A segment with no live message left: record and object deleted. */
  onDropped?(segment: RecordedSegment): void;
  /** A segment rewritten with only its live messages. */
  onRewritten?(before: RecordedSegment, after: RecordedSegment): void;
  /** A segment left as it is because its object could not be read or is not the one recorded (`archive --verify` names it too). */
  onFailed?(segment: RecordedSegment, problem: string): void;
  /**
   * Tests only: called at each step of each rewrite (`recorded` after its
   * transaction commits, before the old object is deleted). Throwing stops
   * the run where it is, as a crash would.
   */
  fault?(step: RewriteStep, segment: { before: RecordedSegment; key: string }): void | Promise<void>;
}

/** What one run did. */
export interface ReconcileSummary {
  /** Segments looked at. */
  segments: number;
  dropped: number;
  rewritten: number;
  /** Entries no longer live that left the store with them. */
  textsRemoved: number;
  /** Segments whose object could not be read, left for `archive --verify` to name. */
  failed: number;
  /** Rewrites given up because the segment changed meanwhile; the next run takes them up. */
  skipped: number;
  stopped: boolean;
}

interface ScannedSegment extends RecordedSegment {
  live: number;
  withdrawn: number;
}

/** A segment `s` as recorded, with its range's live and withdrawn counts from `x` (`liveAndWithdrawn`). */
const scannedColumns = selectList<ScannedSegment>({
  convId: s.convId,
  fromSeq: s.fromSeq,
  toSeq: s.toSeq,
  key: s.key,
  bytes: s.bytes,
  count: s.count,
  checksum: s.checksum,
  live: sql<number>`x.live`,
  withdrawn: sql<number>`x.withdrawn`,
});

/** How many messages of segment `s`'s range are live, and how many withdrawn. */
const liveAndWithdrawn = sql`(
      select count(*) filter (where ${isLive(m)})::int as live, count(*) filter (where not (${isLive(m)}))::int as withdrawn
      from ${messages} ${m} where ${m.convId} = ${s.convId} and ${m.seq} >= ${s.fromSeq} and ${m.seq} <= ${s.toSeq})`;

const scan = statement<{ afterConv: string; afterSeq: number }>(
  (v) => sql`select ${scannedColumns}
    from (select * from ${archiveSegments}
      where (${archiveSegments.convId}, ${archiveSegments.fromSeq}) > (${v.afterConv}::uuid, ${v.afterSeq}::int8)
      order by ${archiveSegments.convId}, ${archiveSegments.fromSeq} limit ${CHUNK}) ${s}
    cross join lateral ${liveAndWithdrawn} x
    order by ${s.convId}, ${s.fromSeq}`,
);

/**
 * Checks every recorded segment against the messages its range still
 * serves, deleting the ones with none and rewriting the ones that hold
 * revoked or erased texts or are more than half stale. Safe to stop and to
 * run again, also beside the server, a purge and another run.
 */
export async function reconcileSegments(db: SqlRunner, store: SegmentStore, options: ReconcileOptions = {}): Promise<ReconcileSummary> {
  const summary = emptySummary();
  let after = { afterConv: FIRST_ID, afterSeq: 0 };
  for (;;) {
    const rows = await db.rows<ScannedSegment>(scan(after));
    if (!(await reconcileScanned(db, store, rows, options, summary))) return summary;
    if (rows.length < CHUNK) return summary;
    after = { afterConv: rows.at(-1)!.convId, afterSeq: rows.at(-1)!.fromSeq };
  }
}

const scanRanges = statement<{ convIds: string[]; fromSeqs: number[]; toSeqs: number[] }>(
  (v) => sql`select ${scannedColumns}
    from unnest(${v.convIds}::uuid[], ${v.fromSeqs}::int8[], ${v.toSeqs}::int8[]) r(conv_id, from_seq, to_seq)
    join ${archiveSegments} ${s} on ${s.convId} = r.conv_id and ${s.fromSeq} <= r.to_seq and ${s.toSeq} >= r.from_seq
    cross join lateral ${liveAndWithdrawn} x
    order by ${s.convId}, ${s.fromSeq}`,
);

/**
 * `reconcileSegments` for the segments overlapping `ranges` alone (ranges
 * that do not overlap each other): what an erasure calls once it commits,
 * so the texts it withdrew leave the store at once rather than at the
 * archiver's next run.
 */
export async function reconcileSegmentsIn(db: SqlRunner, store: SegmentStore, ranges: readonly SeqRange[], options: ReconcileOptions = {}): Promise<ReconcileSummary> {
  const summary = emptySummary();
  if (ranges.length === 0) return summary;
  const rows = await db.rows<ScannedSegment>(
    scanRanges({ convIds: ranges.map((r) => r.convId), fromSeqs: ranges.map((r) => r.fromSeq), toSeqs: ranges.map((r) => r.toSeq) }),
  );
  await reconcileScanned(db, store, rows, options, summary);
  return summary;
}

const emptySummary = (): ReconcileSummary => ({ segments: 0, dropped: 0, rewritten: 0, textsRemoved: 0, failed: 0, skipped: 0, stopped: false });

/** Drops or rewrites each of `rows` as its fate says, into `summary`; false once stopped by the signal. */
async function reconcileScanned(db: SqlRunner, store: SegmentStore, rows: ScannedSegment[], options: ReconcileOptions, summary: ReconcileSummary): Promise<boolean> {
  for (const { live, withdrawn, ...segment } of rows) {
    if (options.signal?.aborted) {
      summary.stopped = true;
      return false;
    }
    summary.segments += 1;
    const fate = segmentFate({ count: segment.count, live, withdrawn });
    if (fate === 'drop') await drop(db, store, segment, options, summary);
    if (fate === 'rewrite') await rewrite(db, store, segment, options, summary);
  }
  return true;
}

const dropIfEmpty = statement<{ convId: string; fromSeq: number; key: string }>(
  (v) => sql`delete from ${archiveSegments} ${s}
    where ${s.convId} = ${v.convId}::uuid and ${s.fromSeq} = ${v.fromSeq}::int8 and ${s.key} = ${v.key}
      and not exists (select 1 from ${messages} ${m}
        where ${m.convId} = ${s.convId} and ${m.seq} >= ${s.fromSeq} and ${m.seq} <= ${s.toSeq} and ${isLive(m)})
    returning ${s.count} as count`,
);

/** Deletes `segment`'s record, if it still holds no live message, then its object. */
async function drop(db: SqlRunner, store: SegmentStore, segment: RecordedSegment, options: ReconcileOptions, summary: ReconcileSummary): Promise<void> {
  const [gone] = await db.rows<{ count: number }>(dropIfEmpty(segment));
  if (gone === undefined) return;
  await store.delete(segment.key);
  summary.dropped += 1;
  summary.textsRemoved += gone.count;
  options.onDropped?.(segment);
}

const liveSeqs = statement<{ convId: string; fromSeq: number; toSeq: number }>(
  (v) => sql`select ${m.seq} as seq from ${messages} ${m}
    where ${m.convId} = ${v.convId}::uuid and ${m.seq} >= ${v.fromSeq}::int8 and ${m.seq} <= ${v.toSeq}::int8 and ${isLive(m)}
    order by ${m.seq}`,
);

const repoint = statement<{ convId: string; oldFromSeq: number; oldToSeq: number; oldKey: string } & Omit<RecordedSegment, 'convId'>>(
  (v) => sql`with live as (
        select count(*)::int as n from ${messages} ${m}
        where ${m.convId} = ${v.convId}::uuid and ${m.seq} >= ${v.oldFromSeq}::int8 and ${m.seq} <= ${v.oldToSeq}::int8 and ${isLive(m)}),
      updated as (
        update ${archiveSegments} ${s}
        set ${bare(s.fromSeq)} = ${v.fromSeq}::int8, ${bare(s.toSeq)} = ${v.toSeq}::int8, ${bare(s.key)} = ${v.key},
          ${bare(s.bytes)} = ${v.bytes}::int, ${bare(s.checksum)} = ${v.checksum}, ${bare(s.count)} = ${v.count}::int
        where ${s.convId} = ${v.convId}::uuid and ${s.fromSeq} = ${v.oldFromSeq}::int8 and ${s.key} = ${v.oldKey}
          and (select n from live) = ${v.count}::int
        returning 1)
    select count(*)::int as updated from updated`,
);

/** Rewrites `segment` with only its live entries; see the order at the top. */
async function rewrite(db: SqlRunner, store: SegmentStore, before: RecordedSegment, options: ReconcileOptions, summary: ReconcileSummary): Promise<void> {
  const { convId } = before;
  const live = new Set((await db.rows<{ seq: number }>(liveSeqs(before))).map((r) => r.seq));
  if (live.size === 0) return drop(db, store, before, options, summary);
  const read = await readRecorded(store, before);
  if (!read.ok) {
    summary.failed += 1;
    options.onFailed?.(before, read.problem);
    return;
  }
  const kept = read.entries.filter((e) => live.has(e.seq));
  if (kept.length !== live.size) {
    // Every live message's text is in its segment; if not, rewriting could only lose more.
    summary.failed += 1;
    options.onFailed?.(before, `it holds ${kept.length} of the ${live.size} live messages of its range`);
    return;
  }
  const encoded = await encodeSegment(convId, kept);
  const { fromSeq, toSeq, count, checksum } = encoded.header;
  const key = segmentKey(convId, fromSeq, toSeq);
  const after: RecordedSegment = { convId, fromSeq, toSeq, key, bytes: encoded.bytes.length, count, checksum };
  await store.put(key, encoded.bytes);
  const writtenAt = performance.now();
  await options.fault?.('written', { before, key });
  const stored = await store.get(key);
  if (stored === null || !Buffer.from(stored).equals(encoded.bytes) || !(await decodeSegment(stored)).ok) {
    throw new Error(`The rewritten archive segment ${key} read back from ${store.location} is not what was written; ${before.key} is still the recorded one.`);
  }
  await options.fault?.('verified', { before, key });
  // One statement, so one transaction: the check and the new record commit together.
  const recorded =
    performance.now() - writtenAt < UNRECORDED_LIMIT_MS &&
    (await db.rows<{ updated: number }>(repoint({ ...after, oldFromSeq: before.fromSeq, oldToSeq: before.toSeq, oldKey: before.key })))[0]!.updated === 1;
  if (!recorded) {
    await store.delete(key);
    summary.skipped += 1;
    return;
  }
  await options.fault?.('recorded', { before, key });
  await store.delete(before.key);
  summary.rewritten += 1;
  summary.textsRemoved += before.count - count;
  options.onRewritten?.(before, after);
}

/** `segment`'s entries, if its object is there and is the segment recorded. */
async function readRecorded(
  store: SegmentStore,
  segment: RecordedSegment,
): Promise<{ ok: true; entries: { seq: number; text: string }[] } | { ok: false; problem: string }> {
  let bytes: Uint8Array | null;
  try {
    bytes = await store.get(segment.key);
  } catch (error) {
    return { ok: false, problem: `${store.location} did not answer (${(error as Error).message})` };
  }
  if (bytes === null) return { ok: false, problem: `${store.location} has no such object` };
  const decoded = await decodeSegment(bytes);
  if (!decoded.ok) return decoded;
  const h = decoded.header;
  if (h.conversation !== segment.convId || h.fromSeq !== segment.fromSeq || h.toSeq !== segment.toSeq || h.count !== segment.count || h.checksum !== segment.checksum) {
    return { ok: false, problem: 'its header is not the segment archive_segments recorded under that key' };
  }
  return { ok: true, entries: decoded.entries };
}
