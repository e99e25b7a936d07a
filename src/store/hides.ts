/** "Delete for me": hiding messages from one member, all or nothing. */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { MessageKey } from './messages.ts';
import { keyArrays } from './sqlFragments.ts';

/** What a hide did. */
export type HideOutcome = { kind: 'hidden'; newlyHidden: number } | { kind: 'not-found'; key: MessageKey };

/**
 * Hides `keys` from `viewerId`. Every key must be a message the viewer may
 * read (one they already hid counts, so a repeat is harmless); otherwise
 * nothing is hidden and the first unreadable key is named.
 */
export async function hideMessages(db: SqlRunner, viewerId: string, keys: readonly MessageKey[]): Promise<HideOutcome> {
  return db.transaction(async (tx): Promise<HideOutcome> => {
    const readable = await tx.rows<{ conv_id: string; seq: number }>(sql`select m.conv_id, m.seq
        from ${keyArrays(keys)} as k(conv_id, seq)
        join members mb on mb.conv_id = k.conv_id and mb.user_id = ${viewerId}
        join messages m on m.conv_id = k.conv_id and m.seq = k.seq
        where m.seq > mb.clear_seq
        for share of m`);
    const found = new Set(readable.map((r) => `${r.conv_id}:${r.seq}`));
    const missing = keys.find((k) => !found.has(`${k.convId}:${k.seq}`));
    if (missing !== undefined) return { kind: 'not-found', key: missing };
    const inserted = await tx.rows<{ seq: number }>(sql`insert into message_hides (conv_id, user_id, seq)
        select k.conv_id, ${viewerId}, k.seq from ${keyArrays(keys)} as k(conv_id, seq)
        on conflict do nothing
        returning seq`);
    return { kind: 'hidden', newlyHidden: inserted.length };
  });
}
