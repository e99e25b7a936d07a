/** "Delete for me": hiding messages from one member, all or nothing. */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageHides, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { recordChanges } from './changes.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import type { NotFound } from './outcome.ts';
import { bareList, keyArrays, type KeyValues, keyValues, type RetentionClock, type RetentionValues, retentionValues, visibleFloor } from './sqlFragments.ts';
import { statement } from './statement.ts';

/** What a hide did. */
export type HideOutcome = { kind: 'hidden'; newlyHidden: number } | (NotFound & { key: MessageKey });

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');

/** The keys the viewer may read (hidden ones included), locked against a concurrent purge. */
const readableKeys = statement<KeyValues & RetentionValues & { viewerId: string }>(
  (v) => sql`select ${m.convId} as conv_id, ${m.seq} as seq
        from ${keyArrays(v)} as k(conv_id, seq)
        join ${members} ${mb} on ${mb.convId} = k.conv_id and ${mb.userId} = ${v.viewerId}
        join ${conversations} ${c} on ${c.id} = k.conv_id
        join ${messages} ${m} on ${m.convId} = k.conv_id and ${m.seq} = k.seq
        where ${m.seq} > ${visibleFloor(mb, c, v)}
        for share of ${m}`,
);

const insertHides = statement<KeyValues & { viewerId: string }>(
  (v) => sql`insert into ${messageHides} (${bareList(messageHides.convId, messageHides.userId, messageHides.seq)})
        select k.conv_id, ${v.viewerId}, k.seq from ${keyArrays(v)} as k(conv_id, seq)
        on conflict do nothing
        returning ${messageHides.convId} as conv_id, ${messageHides.seq} as seq`,
);

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
    const bound = keyValues(keys);
    const readable = await tx.rows<{ conv_id: string; seq: number }>(readableKeys({ ...bound, ...retentionValues(retention), viewerId }));
    const found = new Set(readable.map((r) => messageKeyString({ convId: r.conv_id, seq: r.seq })));
    const missing = keys.find((k) => !found.has(messageKeyString(k)));
    if (missing !== undefined) return { kind: 'not-found', key: missing };
    const inserted = await tx.rows<{ conv_id: string; seq: number }>(insertHides({ ...bound, viewerId }));
    // The viewer's other devices learn of it from the change feed.
    await recordChanges(
      tx,
      inserted.map((r) => ({ convId: r.conv_id, kind: 'hidden' as const, fromSeq: r.seq, toSeq: r.seq, userId: viewerId, subjectId: null })),
    );
    return { kind: 'hidden', newlyHidden: inserted.length };
  });
}
