/**
 * The archiver: moves the bodies of old messages out of PostgreSQL into
 * segments (segment.ts) in a segment store, leaving the index rows where
 * they are, so seqs, senders, times, revokes, hides and gaps read as before.
 *
 * Per segment, in this order:
 *
 *   1. read up to a segment's worth of a conversation's oldest warm bodies
 *      (one statement, no lock);
 *   2. encode and write the object under a key no one else uses;
 *   3. read it back: the same bytes, and they decode;
 *   4. one short transaction: record the segment and delete exactly those
 *      bodies (and with them their search vectors). If any of them is gone
 *      by then (revoked, erased or purged since step 1, or archived by
 *      another archiver), the transaction is rolled back and the object
 *      deleted: the segment is skipped, and the next run archives what is
 *      left. Bodies never change in place, so "still there" is "unchanged".
 *
 * No step locks a conversation row, and every step is safe to interrupt:
 * before 4 commits, the warm bodies are all there (and the object, if
 * written, is recorded nowhere); after, the recorded segment is complete
 * and verified. Objects written and never recorded are deleted by a later
 * run once they are `orphanGraceMs` old (listing the store and comparing
 * with `archive_segments`); the grace keeps one archiver from deleting the
 * object another is about to record, and an archiver that took longer than
 * `UNRECORDED_LIMIT_MS` between writing and recording skips instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { archiveSegments, conversations, messageBodies, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { bareList } from '../store/sqlFragments.ts';
import { statement } from '../store/statement.ts';
import { decodeSegment, encodeWithin, SEGMENT_LIMITS, type SegmentLimits } from './segment.ts';
import type { SegmentStore } from './segmentStore.ts';

const c = alias(conversations, 'c');
const m = alias(messages, 'm');
const b = alias(messageBodies, 'b');
const s = alias(archiveSegments, 's');

/** Conversations looked at per scan statement. */
const SCAN_CHUNK = 1000;
/** Below every uuid: where the scan starts. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';
/** Default grace before an unrecorded object counts as abandoned. */
const ORPHAN_GRACE_MS = 10 * 60_000;
/** An archiver that took longer than this from writing an object to recording it skips it: a cleanup may be about to delete it. */
export const UNRECORDED_LIMIT_MS = 60_000;
/** Store keys compared with `archive_segments` per statement during cleanup. */
const CLEANUP_CHUNK = 500;

/** A point in the order above, where the test-only fault hook is called. */
export type ArchiveStep = 'read' | 'written' | 'verified' | 'recorded' | 'committed';

/** One segment recorded. */
export interface SegmentReport {
  convId: string;
  fromSeq: number;
  toSeq: number;
  count: number;
  bytes: number;
  key: string;
}

export interface ArchiveOptions {
  /** Archive bodies of messages created before this instant. */
  before: Date;
  /** A conversation's newest seqs that stay warm. */
  keepNewest: number;
  limits?: SegmentLimits;
  /** Unrecorded objects younger than this are left for their writer (default 10 minutes); 0 only where no other archiver runs. */
  orphanGraceMs?: number;
  /** Stops the run before its next segment; what is left is the next run's. */
  signal?: AbortSignal;
  /**
   * After each segment, rest this many times as long as the segment took
   * (0: none), so reads beside a long run keep their rate: archiving is
   * never urgent, and on a small box its compression and deletes take the
   * CPU pages need.
   */
  restRatio?: number;
  onSegment?(report: SegmentReport): void;
  /** Called once per conversation that had something archived, after it is done. */
  onConversation?(convId: string, totals: { segments: number; messages: number }): void;
  /** A segment given up because its bodies changed between reading and recording. */
  onSkipped?(convId: string, fromSeq: number, toSeq: number): void;
  /** Called with how many orphaned objects were removed, when there were any. */
  onOrphans?(removed: number): void;
  /**
   * Tests only: called at each step of each segment (`recorded` inside its
   * transaction, before it commits). Throwing stops the run where it is,
   * as a crash would: nothing is cleaned up on the way out.
   */
  fault?(step: ArchiveStep, segment: { convId: string; fromSeq: number; toSeq: number; key: string | null }): void | Promise<void>;
}

/** What one run did. */
export interface ArchiveSummary {
  conversations: number;
  segments: number;
  messages: number;
  bytes: number;
  /** Segments given up because their bodies changed meanwhile. */
  skipped: number;
  orphansRemoved: number;
  seconds: number;
  /** Stopped by the signal before finishing. */
  stopped: boolean;
}

/**
 * Archives every eligible body (created before `options.before`, not among
 * its conversation's newest `keepNewest` seqs) into `store`, conversation
 * after conversation, after removing abandoned objects. Safe to stop at any
 * point and to run again, also while the server serves.
 */
export async function archiveBodies(db: SqlRunner, store: SegmentStore, options: ArchiveOptions): Promise<ArchiveSummary> {
  const started = performance.now();
  const summary: ArchiveSummary = { conversations: 0, segments: 0, messages: 0, bytes: 0, skipped: 0, orphansRemoved: 0, seconds: 0, stopped: false };
  summary.orphansRemoved = await removeOrphans(db, store, options.orphanGraceMs ?? ORPHAN_GRACE_MS);
  if (summary.orphansRemoved > 0) options.onOrphans?.(summary.orphansRemoved);
  let after = FIRST_ID;
  scanning: for (;;) {
    const rows = await db.rows<{ id: string; through: number; due: boolean }>(
      scan({ after, before: options.before.toISOString(), keepNewest: options.keepNewest }),
    );
    for (const { id, through, due } of rows) {
      if (!due) continue;
      if (options.signal?.aborted) break scanning;
      const [segments, messages] = [summary.segments, summary.messages];
      await archiveConversation(db, store, id, through, options, summary);
      if (summary.segments > segments) {
        summary.conversations += 1;
        options.onConversation?.(id, { segments: summary.segments - segments, messages: summary.messages - messages });
      }
    }
    if (rows.length < SCAN_CHUNK) break;
    after = rows.at(-1)!.id;
  }
  summary.stopped = options.signal?.aborted ?? false;
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

const scan = statement<{ after: string; before: string; keepNewest: number }>(
  (v) => sql`select ${c.id} as id, x.through,
      x.through >= coalesce((select min(${b.seq}) from ${messageBodies} ${b} where ${b.convId} = ${c.id}), x.through + 1) as due
    from (select * from ${conversations} where ${conversations.id} > ${v.after}::uuid order by ${conversations.id} limit ${SCAN_CHUNK}) ${c}
    cross join lateral (select least(${c.maxSeq} - ${v.keepNewest}::int8, coalesce((
        select ${m.seq} from ${messages} ${m}
        where ${m.convId} = ${c.id} and ${m.createdAt} < ${v.before}::timestamptz
        order by ${m.createdAt} desc, ${m.seq} desc limit 1), 0)) as through) x
    order by ${c.id}`,
);

const warmBodies = statement<{ convId: string; after: number; through: number; limit: number }>(
  (v) => sql`select ${b.seq} as seq, ${b.text} as text from ${messageBodies} ${b}
    where ${b.convId} = ${v.convId} and ${b.seq} > ${v.after}::int8 and ${b.seq} <= ${v.through}::int8
    order by ${b.seq} limit ${v.limit}`,
);

/** Archives `convId`'s warm bodies at or below `through`, a segment at a time. */
async function archiveConversation(
  db: SqlRunner,
  store: SegmentStore,
  convId: string,
  through: number,
  options: ArchiveOptions,
  summary: ArchiveSummary,
): Promise<void> {
  const limits = options.limits ?? SEGMENT_LIMITS;
  let after = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    const started = performance.now();
    const entries = await db.rows<{ seq: number; text: string }>(warmBodies({ convId, after, through, limit: limits.messages }));
    if (entries.length === 0) return;
    const segment = await encodeWithin(convId, entries, limits);
    const { fromSeq, toSeq, count } = segment.header;
    await options.fault?.('read', { convId, fromSeq, toSeq, key: null });
    const key = segmentKey(convId, fromSeq, toSeq);
    const where = { convId, fromSeq, toSeq, key };
    await store.put(key, segment.bytes);
    const writtenAt = performance.now();
    await options.fault?.('written', where);
    const stored = await store.get(key);
    if (stored === null || !Buffer.from(stored).equals(segment.bytes) || !(await decodeSegment(stored)).ok) {
      throw new Error(`The archive segment ${key} read back from ${store.location} is not what was written; nothing was recorded.`);
    }
    await options.fault?.('verified', where);
    const recorded =
      performance.now() - writtenAt < UNRECORDED_LIMIT_MS &&
      (await record(db, { convId, fromSeq, toSeq, key, bytes: segment.bytes.length, checksum: segment.header.checksum, count }, options, where));
    if (recorded) {
      await options.fault?.('committed', where);
      summary.segments += 1;
      summary.messages += count;
      summary.bytes += segment.bytes.length;
      options.onSegment?.({ convId, fromSeq, toSeq, count, bytes: segment.bytes.length, key });
    } else {
      await store.delete(key);
      summary.skipped += 1;
      options.onSkipped?.(convId, fromSeq, toSeq);
    }
    after = toSeq;
    const rest = (performance.now() - started) * (options.restRatio ?? 0);
    if (rest > 0) await sleep(rest, undefined, { signal: options.signal }).catch(() => undefined);
  }
}

interface SegmentRecord {
  convId: string;
  fromSeq: number;
  toSeq: number;
  key: string;
  bytes: number;
  checksum: string;
  count: number;
}

const recordAndDelete = statement<SegmentRecord>(
  (v) => sql`with
      inserted as (
        insert into ${archiveSegments} (${bareList(archiveSegments.convId, archiveSegments.fromSeq, archiveSegments.toSeq, archiveSegments.key, archiveSegments.bytes, archiveSegments.checksum, archiveSegments.count)})
        values (${v.convId}::uuid, ${v.fromSeq}::int8, ${v.toSeq}::int8, ${v.key}, ${v.bytes}::int, ${v.checksum}, ${v.count}::int)
        on conflict do nothing
        returning 1),
      gone as (
        delete from ${messageBodies} ${b}
        where ${b.convId} = ${v.convId}::uuid and ${b.seq} >= ${v.fromSeq}::int8 and ${b.seq} <= ${v.toSeq}::int8
        returning 1)
    select (select count(*)::int from inserted) as inserted, (select count(*)::int from gone) as deleted`,
);

/** Thrown inside the recording transaction to roll it back. */
class BodiesChanged extends Error {}

/**
 * Records the segment and deletes its bodies in one transaction; false
 * (rolled back) unless exactly `count` bodies were deleted. Sends only
 * append above `max_seq`, so the bodies in the segment's range now are a
 * subset of those read; the same number means the same bodies.
 */
async function record(db: SqlRunner, segment: SegmentRecord, options: ArchiveOptions, where: Parameters<NonNullable<ArchiveOptions['fault']>>[1]): Promise<boolean> {
  try {
    await db.transaction(async (tx) => {
      const [row] = await tx.rows<{ inserted: number; deleted: number }>(recordAndDelete(segment));
      if (row!.inserted !== 1 || row!.deleted !== segment.count) throw new BodiesChanged();
      await options.fault?.('recorded', where);
    });
    return true;
  } catch (error) {
    if (error instanceof BodiesChanged) return false;
    throw error;
  }
}

/**
 * A new object's key: conversation/from-to-id.seg, never used before. Every
 * segment object is named so (rewrites too), since the cleanup below goes
 * by this shape and the seq range it names.
 */
export function segmentKey(convId: string, fromSeq: number, toSeq: number): string {
  return `${convId}/${fromSeq}-${toSeq}-${randomBytes(8).toString('hex')}.seg`;
}

/** A key as the archiver writes it (conversation/from-to-id.seg), or a file a crashed folder-store put left beside one. */
const OUR_KEY = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(?:(\d{1,15})-\d{1,15}-[0-9a-f]{16}\.seg|\.partial-[0-9a-f]{12})$/;

const recordedKeys = statement<{ convIds: string[]; fromSeqs: number[]; keys: string[] }>(
  (v) => sql`select ${s.key} as key from unnest(${v.convIds}::uuid[], ${v.fromSeqs}::int8[], ${v.keys}::text[]) as k(conv_id, from_seq, key)
    join ${archiveSegments} ${s} on ${s.convId} = k.conv_id and ${s.fromSeq} = k.from_seq and ${s.key} = k.key`,
);

/**
 * Deletes the objects in `store` that the archiver wrote (by their key's
 * shape) and `archive_segments` does not record, once older than
 * `graceMs`. Answers how many it deleted.
 */
export async function removeOrphans(db: SqlRunner, store: SegmentStore, graceMs: number = ORPHAN_GRACE_MS): Promise<number> {
  const cutoff = Date.now() - graceMs;
  let removed = 0;
  let batch: { key: string; convId: string; fromSeq: number | null }[] = [];
  const flush = async () => {
    const named = batch.filter((o) => o.fromSeq !== null);
    const rows =
      named.length === 0
        ? []
        : await db.rows<{ key: string }>(
            recordedKeys({ convIds: named.map((o) => o.convId), fromSeqs: named.map((o) => o.fromSeq!), keys: named.map((o) => o.key) }),
          );
    const recorded = new Set(rows.map((r) => r.key));
    for (const object of batch) {
      if (recorded.has(object.key)) continue;
      await store.delete(object.key);
      removed += 1;
    }
    batch = [];
  };
  for await (const object of store.list()) {
    const match = OUR_KEY.exec(object.key);
    if (match === null || object.modifiedAt.getTime() > cutoff) continue;
    batch.push({ key: object.key, convId: match[1]!, fromSeq: match[2] === undefined ? null : Number(match[2]) });
    if (batch.length >= CLEANUP_CHUNK) await flush();
  }
  if (batch.length > 0) await flush();
  return removed;
}
