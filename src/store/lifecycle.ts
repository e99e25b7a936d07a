/**
 * Removing messages for everyone: a group's retention policy, purging
 * messages (index, body, hides: their seqs become gaps), and erasing a
 * user's texts (the rows stay as `PurgedContent` placeholders). Each is one
 * transaction that also records its change-feed entries.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import { notifyAll } from './notify.ts';
import { type ChangeEntry, recordChanges } from './changes.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { FORBIDDEN, type Forbidden, NOT_FOUND, type NotFound } from './outcome.ts';
import { expiredThrough, keyArrays, type RetentionClock, visibleFloor, visibleTo } from './sqlFragments.ts';

/** What `setRetentionPolicy` did. */
export type SetRetentionOutcome = { kind: 'set'; expiredThroughSeq: number } | NotFound | Forbidden;

/** Sets group `convId`'s own retention limits on behalf of `actorId`, who must own it. */
export async function setRetentionPolicy(
  db: SqlRunner,
  actorId: string,
  retention: RetentionClock,
  convId: string,
  policy: RetentionPolicy,
): Promise<SetRetentionOutcome> {
  return db.transaction(async (tx): Promise<SetRetentionOutcome> => {
    const [member] = await tx.rows<{ role: string; kind: string }>(sql`select mb.role, c.kind
        from members mb join conversations c on c.id = mb.conv_id
        where mb.conv_id = ${convId} and mb.user_id = ${actorId}
        for update of c`);
    if (member === undefined) return NOT_FOUND;
    if (member.kind !== 'group' || member.role !== 'owner') return FORBIDDEN;
    const [updated] = await tx.rows<{ expired_through: number }>(sql`update conversations c
        set retention_days = ${policy.days}::int, retention_max_messages = ${policy.maxMessages}::int
        where c.id = ${convId}
        returning ${expiredThrough('c', retention)} as expired_through`);
    const through = updated!.expired_through;
    await recordChanges(tx, [{ convId, kind: 'retention_changed', fromSeq: 1, toSeq: through, userId: null, subjectId: null }]);
    return { kind: 'set', expiredThroughSeq: through };
  });
}

/** What `purgeMessages` did. */
export type PurgeOutcome = { kind: 'purged'; count: number } | (NotFound & { key: MessageKey }) | (Forbidden & { key: MessageKey });

/** Consecutive seqs of one conversation as ranges: the feed's entries for a purge. */
function seqRanges(convId: string, seqs: number[]): { convId: string; fromSeq: number; toSeq: number }[] {
  const ranges: { convId: string; fromSeq: number; toSeq: number }[] = [];
  for (const seq of [...seqs].sort((a, b) => a - b)) {
    const last = ranges.at(-1);
    if (last !== undefined && last.toSeq === seq - 1) last.toSeq = seq;
    else ranges.push({ convId, fromSeq: seq, toSeq: seq });
  }
  return ranges;
}

/**
 * Purges `keys` for everyone on behalf of `actorId`: all or nothing. Every
 * key must be a message the actor can read and the actor must own each
 * one's group; or the actor is an admin, who may purge any message.
 */
export async function purgeMessages(
  db: SqlRunner,
  actorId: string,
  admin: boolean,
  retention: RetentionClock,
  keys: readonly MessageKey[],
): Promise<PurgeOutcome> {
  return db.transaction(async (tx): Promise<PurgeOutcome> => {
    // A member finds the messages they can read; an admin (moderation) any
    // message that exists, member or not.
    const readable = await tx.rows<{ conv_id: string; seq: number; may_purge: boolean }>(sql`select m.conv_id, m.seq,
          (c.kind = 'group' and mb.role = 'owner') as may_purge
        from ${keyArrays(keys)} as k(conv_id, seq)
        join conversations c on c.id = k.conv_id
        join messages m on m.conv_id = k.conv_id and m.seq = k.seq
        left join members mb on mb.conv_id = k.conv_id and mb.user_id = ${actorId}
        where ${admin}::boolean or (mb.user_id is not null and ${visibleTo('m', actorId, visibleFloor('mb', 'c', retention))})
        for update of m`);
    const found = new Map(readable.map((r) => [messageKeyString({ convId: r.conv_id, seq: r.seq }), r]));
    const missing = keys.find((k) => !found.has(messageKeyString(k)));
    if (missing !== undefined) return { kind: 'not-found', key: missing };
    const refused = admin ? undefined : keys.find((k) => !found.get(messageKeyString(k))!.may_purge);
    if (refused !== undefined) return { kind: 'forbidden', key: refused };
    const gone = await tx.rows<{ conv_id: string; seq: number }>(sql`with k as (select * from ${keyArrays(keys)} as k(conv_id, seq)),
        bodies as (delete from message_bodies b using k where b.conv_id = k.conv_id and b.seq = k.seq),
        hides as (delete from message_hides h using k where h.conv_id = k.conv_id and h.seq = k.seq)
        delete from messages m using k where m.conv_id = k.conv_id and m.seq = k.seq
        returning m.conv_id, m.seq`);
    const seqsByConversation = new Map<string, number[]>();
    for (const r of gone) seqsByConversation.set(r.conv_id, [...(seqsByConversation.get(r.conv_id) ?? []), r.seq]);
    const entries: ChangeEntry[] = [...seqsByConversation].flatMap(([convId, seqs]) =>
      seqRanges(convId, seqs).map((range) => ({ ...range, kind: 'purged' as const, userId: null, subjectId: null })),
    );
    await recordChanges(tx, entries);
    await notifyAll(tx, entries.map((e) => ({ convId: e.convId, kind: 'purged', seq: e.fromSeq, toSeq: e.toSeq, userId: null })));
    return { kind: 'purged', count: gone.length };
  });
}

/**
 * Erases the text of every message `userId` sent, in every conversation:
 * bodies deleted, rows marked `erased_at` (so seqs stay dense), one `erased`
 * entry per conversation. Revoked messages have no text left and are skipped.
 */
export async function eraseUser(db: SqlRunner, userId: string): Promise<number> {
  return db.transaction(async (tx) => {
    const erased = await tx.rows<{ conv_id: string; from_seq: number; to_seq: number; n: number }>(sql`with erased as (
          update messages set erased_at = now()
          where sender_id = ${userId} and erased_at is null and revoked_at is null
          returning conv_id, seq),
        bodies as (delete from message_bodies b using erased e where b.conv_id = e.conv_id and b.seq = e.seq)
        select conv_id, min(seq) as from_seq, max(seq) as to_seq, count(*)::int as n from erased group by conv_id`);
    await recordChanges(
      tx,
      erased.map((r) => ({ convId: r.conv_id, kind: 'erased' as const, fromSeq: r.from_seq, toSeq: r.to_seq, userId: null, subjectId: userId })),
    );
    return erased.reduce((sum, r) => sum + r.n, 0);
  });
}
