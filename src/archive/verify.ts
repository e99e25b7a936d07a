/**
 * `backscroll archive --verify`: every segment `archive_segments` records is
 * read from its store and checked as a read would check it, and more:
 * present, the recorded size, its checksum, it decodes, and its header
 * (conversation, seq range, count, checksum) is the one recorded.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { archiveSegments } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { selectList } from '../store/sqlFragments.ts';
import { statement } from '../store/statement.ts';
import { decodeSegment } from './segment.ts';
import type { SegmentStore } from './segmentStore.ts';

const s = alias(archiveSegments, 's');

/** Segments read per statement. */
const CHUNK = 200;
/** Segments fetched from the store at once. */
const CONCURRENCY = 4;
/** Below every uuid. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** One segment that failed, and why. */
export interface BadSegment {
  key: string;
  convId: string;
  fromSeq: number;
  toSeq: number;
  problem: string;
}

type RecordedSegment = Pick<typeof archiveSegments.$inferSelect, 'convId' | 'fromSeq' | 'toSeq' | 'key' | 'bytes' | 'checksum' | 'count'>;

const recorded = statement<{ afterConv: string; afterSeq: number }>(
  (v) => sql`select ${selectList<RecordedSegment>({
    convId: s.convId,
    fromSeq: s.fromSeq,
    toSeq: s.toSeq,
    key: s.key,
    bytes: s.bytes,
    checksum: s.checksum,
    count: s.count,
  })}
    from ${archiveSegments} ${s}
    where (${s.convId}, ${s.fromSeq}) > (${v.afterConv}::uuid, ${v.afterSeq}::int8)
    order by ${s.convId}, ${s.fromSeq} limit ${CHUNK}`,
);

/**
 * Checks every recorded segment; answers how many were checked and the
 * ones that failed. `onProgress` hears the count checked after each chunk.
 */
export async function verifyArchive(
  db: SqlRunner,
  store: SegmentStore,
  onProgress?: (checked: number) => void,
): Promise<{ checked: number; bad: BadSegment[] }> {
  const bad: BadSegment[] = [];
  let checked = 0;
  let after = { afterConv: FIRST_ID, afterSeq: 0 };
  for (;;) {
    const rows = await db.rows<RecordedSegment>(recorded(after));
    for (let i = 0; i < rows.length; i += CONCURRENCY) {
      const problems = await Promise.all(rows.slice(i, i + CONCURRENCY).map((row) => problemOf(store, row)));
      problems.forEach((problem, j) => {
        const row = rows[i + j]!;
        if (problem !== null) bad.push({ key: row.key, convId: row.convId, fromSeq: row.fromSeq, toSeq: row.toSeq, problem });
      });
    }
    checked += rows.length;
    if (rows.length > 0) onProgress?.(checked);
    if (rows.length < CHUNK) return { checked, bad };
    after = { afterConv: rows.at(-1)!.convId, afterSeq: rows.at(-1)!.fromSeq };
  }
}

/** What is wrong with `row`'s object, or null. */
async function problemOf(store: SegmentStore, row: RecordedSegment): Promise<string | null> {
  let bytes: Uint8Array | null;
  try {
    bytes = await store.get(row.key);
  } catch (error) {
    return `${store.location} did not answer (${(error as Error).message})`;
  }
  if (bytes === null) return `${store.location} has no such object`;
  if (bytes.byteLength !== row.bytes) return `it is ${bytes.byteLength} bytes, ${row.bytes} were recorded`;
  const decoded = await decodeSegment(bytes);
  if (!decoded.ok) return decoded.problem;
  const h = decoded.header;
  if (h.checksum !== row.checksum) return 'its checksum is not the one recorded';
  if (h.conversation !== row.convId || h.fromSeq !== row.fromSeq || h.toSeq !== row.toSeq || h.count !== row.count) {
    return `its header says conversation ${h.conversation} seqs ${h.fromSeq} to ${h.toSeq} (${h.count}), the record says ${row.convId} seqs ${row.fromSeq} to ${row.toSeq} (${row.count})`;
  }
  return null;
}
