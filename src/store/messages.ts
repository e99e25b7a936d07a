/**
 * Looking messages up by key: the viewer's view of index rows, and bodies.
 * Both take many keys at once; the per-request loaders batch into them.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { inKeyOrder } from './batch.ts';
import { type MessageRow, type RawMessageRow, toMessageRow } from './rows.ts';
import { isoTime, keyArrays, messageColumns, type RetentionClock, visibleFloor, visibleTo } from './sqlFragments.ts';

/** A message's key: its conversation and seq. */
export interface MessageKey {
  convId: string;
  seq: number;
}

/** A message key as one string (a Map or DataLoader cache key); the only spelling of it. */
export function messageKeyString(key: MessageKey): string {
  return `${key.convId}:${key.seq}`;
}

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
  const rows = await db.rows<RawMessageRow>(sql`select ${messageColumns('m')}
      from ${keyArrays(keys)} as k(conv_id, seq)
      join members mb on mb.conv_id = k.conv_id and mb.user_id = ${viewerId}
      join conversations c on c.id = k.conv_id
      join messages m on m.conv_id = k.conv_id and m.seq = k.seq
      where ${visibleTo('m', viewerId, visibleFloor('mb', 'c', retention))}`);
  return inKeyOrder(keys, rows.map(toMessageRow), messageKeyString, messageKeyString);
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

/** The bodies of `keys`, in the same order. Callers pass keys the viewer may see. */
export async function findMessageBodies(db: SqlRunner, keys: readonly MessageKey[]): Promise<MessageBody[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<{
    conv_id: string;
    seq: number;
    revoked_at: string | null;
    revoked_by: string | null;
    erased_at: string | null;
    text: string | null;
  }>(sql`select m.conv_id, m.seq, ${isoTime('m.revoked_at')} as revoked_at, m.revoked_by, ${isoTime('m.erased_at')} as erased_at, b.text
      from ${keyArrays(keys)} as k(conv_id, seq)
      join messages m on m.conv_id = k.conv_id and m.seq = k.seq
      left join message_bodies b on b.conv_id = m.conv_id and b.seq = m.seq`);
  const found = inKeyOrder(keys, rows, messageKeyString, (r) => messageKeyString({ convId: r.conv_id, seq: r.seq }));
  return found.map((row): MessageBody => {
    if (row === null) return { kind: 'missing' };
    if (row.revoked_at !== null) return { kind: 'revoked', revokedAt: row.revoked_at, revokedBy: row.revoked_by ?? '' };
    if (row.erased_at !== null) return { kind: 'erased', erasedAt: row.erased_at };
    if (row.text === null) return { kind: 'missing' };
    return { kind: 'text', text: row.text };
  });
}
