/** "Delete for me": hiding messages from one member, all or nothing. */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { recordChanges } from './changes.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import type { NotFound } from './outcome.ts';
import { keyArrays, type RetentionClock, visibleFloor } from './sqlFragments.ts';

/** What a hide did. */
export type HideOutcome = { kind: 'hidden'; newlyHidden: number } | (NotFound & { key: MessageKey });

/**
 * Hides `keys` from `viewerId`. Every key must be a message the viewer may
 * read (one they already hid counts, so a repeat is harmless); otherwise
 * nothing is hidden and the first unreadable key is named.
 */
export async function hideMessages(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  keys: readonly MessageKey[],
): Promise<HideOutcome> {
  return db.transaction(async (tx): Promise<HideOutcome> => {
    const readable = await tx.rows<{ conv_id: string; seq: number }>(sql`select m.conv_id, m.seq
        from ${keyArrays(keys)} as k(conv_id, seq)
        join members mb on mb.conv_id = k.conv_id and mb.user_id = ${viewerId}
        join conversations c on c.id = k.conv_id
        join messages m on m.conv_id = k.conv_id and m.seq = k.seq
        where m.seq > ${visibleFloor('mb', 'c', retention)}
        for share of m`);
    const found = new Set(readable.map((r) => messageKeyString({ convId: r.conv_id, seq: r.seq })));
    const missing = keys.find((k) => !found.has(messageKeyString(k)));
    if (missing !== undefined) return { kind: 'not-found', key: missing };
    const inserted = await tx.rows<{ conv_id: string; seq: number }>(sql`insert into message_hides (conv_id, user_id, seq)
        select k.conv_id, ${viewerId}, k.seq from ${keyArrays(keys)} as k(conv_id, seq)
        on conflict do nothing
        returning conv_id, seq`);
    // The viewer's other devices learn of it from the change feed.
    await recordChanges(
      tx,
      inserted.map((r) => ({ convId: r.conv_id, kind: 'hidden' as const, fromSeq: r.seq, toSeq: r.seq, userId: viewerId, subjectId: null })),
    );
    return { kind: 'hidden', newlyHidden: inserted.length };
  });
}
