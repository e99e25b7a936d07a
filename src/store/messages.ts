/**
 * Looking messages up by key: the viewer's view of index rows, and bodies.
 * Both take many keys at once; the per-request loaders batch into them.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { type ArchiveReader, ArchiveUnavailableError, processArchive, type SegmentRef, type SegmentTexts } from '../archive/reader.ts';
import { archiveSegments, conversations, members, messageBodies, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { amongConversations, inBatch, keyedAmong } from './batchConversations.ts';
import { inKeyOrder } from './batch.ts';
import type { MessageRow } from './rows.ts';
import {
  isoTime,
  keyArrays,
  type KeyValues,
  keyValues,
  messageColumns,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  selectList,
  visibleFloor,
  visibleTo,
} from './sqlFragments.ts';
import { statement } from './statement.ts';

/** A message's key: its conversation and seq. */
export interface MessageKey {
  convId: string;
  seq: number;
}

/** A message key as one string (a Map or DataLoader cache key); the only spelling of it. */
export function messageKeyString(key: MessageKey): string {
  return `${key.convId}:${key.seq}`;
}

const m = alias(messages, 'm');
const b = alias(messageBodies, 'b');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');

/** The batch's conversations bound on every table and lookup, so it reads their shards alone (batchConversations.ts). */
const visibleMessages = statement<KeyValues & RetentionValues & { viewerId: string }>(
  (v) => sql`select ${messageColumns(m)}
      from ${keyArrays(v)} as k(conv_id, seq)
      join ${members} ${mb} on ${keyedAmong(mb.convId, sql`k.conv_id`, v.convIds)} and ${mb.userId} = ${v.viewerId}
      join ${conversations} ${c} on ${c.id} = k.conv_id and ${amongConversations(c.id, v.convIds)}
      join ${messages} ${m} on ${keyedAmong(m.convId, sql`k.conv_id`, v.convIds)} and ${m.seq} = k.seq
      where ${visibleTo(m, v.viewerId, visibleFloor(mb, c, v, inBatch(c.id, v.convIds)), inBatch(m.convId, v.convIds))}`,
);

/**
 * For each of `keys`, in order, its row if `viewerId` may see it (member,
 * not cleared, not expired, not hidden); null otherwise.
 */
export async function findVisibleMessages(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  keys: readonly MessageKey[],
): Promise<(MessageRow | null)[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<MessageRow>(visibleMessages({ ...keyValues(keys), ...retentionValues(retention), viewerId }));
  return inKeyOrder(keys, rows, messageKeyString, messageKeyString);
}

/**
 * What a message shows: its text, or the fact that it was revoked or erased.
 * Read from the index row and the body together, so a revoke that commits
 * between a page scan and this read shows as revoked, never as text.
 */
export type MessageBody =
  | { kind: 'text'; text: string }
  | { kind: 'revoked'; revokedAt: string; revokedBy: string }
  | { kind: 'erased'; erasedAt: string }
  | { kind: 'missing' }
  /** Archived, and its segment could not be read (in time, or at all). */
  | { kind: 'unavailable'; error: ArchiveUnavailableError };

/** A message's index row and body as `findMessageBodies` reads them. */
interface BodyRow extends Pick<MessageRow, 'convId' | 'seq' | 'revokedAt' | 'revokedBy'> {
  erasedAt: string | null;
  /** Null when the body is gone (revoked, erased, purged) or archived. */
  text: string | null;
  /** The archive segment holding the body: only when there is no warm body and the message is neither revoked nor erased. */
  segmentKey: string | null;
  segmentFrom: number | null;
  segmentTo: number | null;
  segmentCount: number | null;
  segmentChecksum: string | null;
}

const seg = alias(archiveSegments, 'seg');
const a = alias(archiveSegments, 'a');

/** Bound to the batch's conversations on each table, as `visibleMessages` is. */
const bodies = statement<KeyValues>(
  (v) => sql`select ${selectList<BodyRow>({
    convId: m.convId,
    seq: m.seq,
    revokedAt: isoTime(m.revokedAt),
    revokedBy: m.revokedBy,
    erasedAt: isoTime(m.erasedAt),
    text: b.text,
    segmentKey: sql<string | null>`${seg.key}`,
    segmentFrom: sql<number | null>`${seg.fromSeq}`,
    segmentTo: sql<number | null>`${seg.toSeq}`,
    segmentCount: sql<number | null>`${seg.count}`,
    segmentChecksum: sql<string | null>`${seg.checksum}`,
  })}
      from ${keyArrays(v)} as k(conv_id, seq)
      join ${messages} ${m} on ${keyedAmong(m.convId, sql`k.conv_id`, v.convIds)} and ${m.seq} = k.seq
      left join ${messageBodies} ${b} on ${b.convId} = ${m.convId} and ${b.seq} = ${m.seq} and ${amongConversations(b.convId, v.convIds)}
      left join lateral (
        select ${a.key}, ${a.fromSeq}, ${a.toSeq}, ${a.count}, ${a.checksum} from ${archiveSegments} ${a}
        where ${b.seq} is null and ${m.revokedAt} is null and ${m.erasedAt} is null
          and ${a.convId} = ${m.convId} and ${amongConversations(a.convId, v.convIds)} and ${a.fromSeq} <= ${m.seq}
        order by ${a.fromSeq} desc limit 1) ${seg} on ${seg.toSeq} >= ${m.seq}`,
);

/**
 * The bodies of `keys`, in the same order. Callers pass keys the viewer may
 * see. One statement reads the index rows, warm bodies and, for archived
 * bodies, their segments' records; each segment needed is then read once
 * through `archive` (its cache first). The index row's revoke and erasure
 * win over a segment, which keeps the text as it was archived. A body whose
 * segment cannot be read is `unavailable`, and the others are still read:
 * a page decides what to show of a partly readable archive.
 */
export async function findMessageBodies(
  db: SqlRunner,
  keys: readonly MessageKey[],
  archive: ArchiveReader | null = processArchive(),
): Promise<MessageBody[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<BodyRow>(bodies(keyValues(keys)));
  const segments = await readSegments(rows, archive);
  return inKeyOrder(keys, rows, messageKeyString, messageKeyString).map((row): MessageBody => {
    if (row === null) return { kind: 'missing' };
    if (row.revokedAt !== null) return { kind: 'revoked', revokedAt: row.revokedAt, revokedBy: row.revokedBy ?? '' };
    if (row.erasedAt !== null) return { kind: 'erased', erasedAt: row.erasedAt };
    if (row.text !== null) return { kind: 'text', text: row.text };
    if (row.segmentKey === null) return { kind: 'missing' };
    const segment = segments.get(row.segmentKey);
    if (segment instanceof ArchiveUnavailableError) return { kind: 'unavailable', error: segment };
    const text = segment?.get(row.seq);
    return text === undefined ? { kind: 'missing' } : { kind: 'text', text };
  });
}

/** The texts of every segment `rows` point at, each read once, all at once, or why one could not be read. */
async function readSegments(rows: readonly BodyRow[], archive: ArchiveReader | null): Promise<Map<string, SegmentTexts | ArchiveUnavailableError>> {
  const refs = new Map<string, SegmentRef>();
  for (const row of rows) {
    if (row.segmentKey === null || refs.has(row.segmentKey)) continue;
    refs.set(row.segmentKey, {
      convId: row.convId,
      key: row.segmentKey,
      fromSeq: row.segmentFrom!,
      toSeq: row.segmentTo!,
      count: row.segmentCount!,
      checksum: row.segmentChecksum!,
    });
  }
  if (refs.size === 0) return new Map();
  const read = await Promise.all(
    [...refs.values()].map(async (ref): Promise<readonly [string, SegmentTexts | ArchiveUnavailableError]> => {
      if (archive === null) return [ref.key, new ArchiveUnavailableError(ref.key, 'not-configured', 'this process has no archive store configured')] as const;
      try {
        return [ref.key, await archive.texts(ref)] as const;
      } catch (error) {
        if (error instanceof ArchiveUnavailableError) return [ref.key, error] as const;
        throw error;
      }
    }),
  );
  return new Map(read);
}
