/**
 * Looking messages up by key: the viewer's view of index rows, and bodies.
 * Both take many keys at once; the per-request loaders batch into them.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
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

const visibleMessages = statement<KeyValues & RetentionValues & { viewerId: string }>(
  (v) => sql`select ${messageColumns(m)}
      from ${keyArrays(v)} as k(conv_id, seq)
      join ${members} ${mb} on ${mb.convId} = k.conv_id and ${mb.userId} = ${v.viewerId}
      join ${conversations} ${c} on ${c.id} = k.conv_id
      join ${messages} ${m} on ${m.convId} = k.conv_id and ${m.seq} = k.seq
      where ${visibleTo(m, v.viewerId, visibleFloor(mb, c, v))}`,
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
  | { kind: 'missing' };

/** A message's index row and body as `findMessageBodies` reads them. */
interface BodyRow extends Pick<MessageRow, 'convId' | 'seq' | 'revokedAt' | 'revokedBy'> {
  erasedAt: string | null;
  /** Null when the body is gone (revoked, erased, purged). */
  text: string | null;
}

const bodies = statement<KeyValues>(
  (v) => sql`select ${selectList<BodyRow>({
    convId: m.convId,
    seq: m.seq,
    revokedAt: isoTime(m.revokedAt),
    revokedBy: m.revokedBy,
    erasedAt: isoTime(m.erasedAt),
    text: b.text,
  })}
      from ${keyArrays(v)} as k(conv_id, seq)
      join ${messages} ${m} on ${m.convId} = k.conv_id and ${m.seq} = k.seq
      left join ${messageBodies} ${b} on ${b.convId} = ${m.convId} and ${b.seq} = ${m.seq}`,
);

/** The bodies of `keys`, in the same order. Callers pass keys the viewer may see. */
export async function findMessageBodies(db: SqlRunner, keys: readonly MessageKey[]): Promise<MessageBody[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<BodyRow>(bodies(keyValues(keys)));
  return inKeyOrder(keys, rows, messageKeyString, messageKeyString).map((row): MessageBody => {
    if (row === null) return { kind: 'missing' };
    if (row.revokedAt !== null) return { kind: 'revoked', revokedAt: row.revokedAt, revokedBy: row.revokedBy ?? '' };
    if (row.erasedAt !== null) return { kind: 'erased', erasedAt: row.erasedAt };
    if (row.text === null) return { kind: 'missing' };
    return { kind: 'text', text: row.text };
  });
}
