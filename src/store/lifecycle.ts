/**
 * Removing messages for everyone: a group's retention policy, purging
 * messages (index, body, hides, earlier versions, reactions, thread read
 * positions: their seqs become gaps), and erasing a user's texts with their
 * earlier versions, and the user's reactions (the rows stay as
 * `PurgedContent` placeholders). Each is one
 * transaction that also records its change-feed entries; a purge is
 * announced live once it has committed. Archived texts follow: the record
 * of a segment left with no live message goes in the same transaction
 * (archive/emptySegments.ts), and the archiver's next run deletes its
 * object and rewrites the segments that still hold purged or erased texts
 * among live ones (archive/rewrite.ts).
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { dropEmptySegments, type SeqRange } from '../archive/emptySegments.ts';
import { withdrawErasedTexts } from '../archive/erasure.ts';
import type { SegmentStore } from '../archive/segmentStore.ts';
import { conversations, members, messageBodies, messageEdits, messageHides, messageMentions, messagePins, messageReactions, messages, messageStars, threadReads } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import type { Notice, Publisher } from './notify.ts';
import { type ChangeEntry, recordChanges } from './changes.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { FORBIDDEN, type Forbidden, NOT_FOUND, type NotFound } from './outcome.ts';
import {
  bare,
  expiredThrough,
  keyArrays,
  type KeyValues,
  keyValues,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  visibleFloor,
  visibleTo,
} from './sqlFragments.ts';
import { statement } from './statement.ts';

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const b = alias(messageBodies, 'b');
const h = alias(messageHides, 'h');
const ed = alias(messageEdits, 'ed');
const rx = alias(messageReactions, 'rx');
const tr = alias(threadReads, 'tr');
const st = alias(messageStars, 'st');
const pn = alias(messagePins, 'pn');
const mn = alias(messageMentions, 'mn');

/** What `setRetentionPolicy` did. */
export type SetRetentionOutcome = { kind: 'set'; expiredThroughSeq: number } | NotFound | Forbidden;

/** The actor's membership of `convId`, with the conversation locked. */
const lockMembership = statement<{ actorId: string; convId: string }>(
  (v) => sql`select ${mb.role} as role, ${c.kind} as kind
        from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
        where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.actorId}
        for update of ${c}`,
);

const setPolicy = statement<RetentionValues & { convId: string; days: number | null; maxMessages: number | null }>(
  (v) => sql`update ${conversations} ${c}
        set ${bare(c.retentionDays)} = ${v.days}::int, ${bare(c.retentionMaxMessages)} = ${v.maxMessages}::int
        where ${c.id} = ${v.convId}
        returning ${expiredThrough(c, v, v.convId)} as expired_through`,
);

/** Sets group `convId`'s own retention limits on behalf of `actorId`, who must own it. */
export async function setRetentionPolicy(
  db: SqlRunner,
  actorId: string,
  retention: RetentionClock,
  convId: string,
  policy: RetentionPolicy,
): Promise<SetRetentionOutcome> {
  return db.transaction(async (tx): Promise<SetRetentionOutcome> => {
    const [member] = await tx.rows<{ role: string; kind: string }>(lockMembership({ actorId, convId }));
    if (member === undefined) return NOT_FOUND;
    if (member.kind !== 'group' || member.role !== 'owner') return FORBIDDEN;
    const [updated] = await tx.rows<{ expired_through: number }>(
      setPolicy({ ...retentionValues(retention), convId, days: policy.days, maxMessages: policy.maxMessages }),
    );
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

/** The keys the actor may purge, or (admin) that exist, locked; `may_purge` when the actor owns the message's group. */
const purgeableKeys = statement<KeyValues & RetentionValues & { actorId: string; admin: boolean }>(
  (v) => sql`select ${m.convId} as conv_id, ${m.seq} as seq,
          (${c.kind} = 'group' and ${mb.role} = 'owner') as may_purge
        from ${keyArrays(v)} as k(conv_id, seq)
        join ${conversations} ${c} on ${c.id} = k.conv_id
        join ${messages} ${m} on ${m.convId} = k.conv_id and ${m.seq} = k.seq
        left join ${members} ${mb} on ${mb.convId} = k.conv_id and ${mb.userId} = ${v.actorId}
        where ${v.admin}::boolean or (${mb.userId} is not null and ${visibleTo(m, v.actorId, visibleFloor(mb, c, v))})
        for update of ${m}`,
);

/** Deletes `keys`' index rows, bodies, hides, earlier versions, reactions, stars, pins, mentions and (of roots) thread read positions. */
const purgeKeys = statement<KeyValues>(
  (v) => sql`with k as (select * from ${keyArrays(v)} as k(conv_id, seq)),
        bodies as (delete from ${messageBodies} ${b} using k where ${b.convId} = k.conv_id and ${b.seq} = k.seq),
        versions as (delete from ${messageEdits} ${ed} using k where ${ed.convId} = k.conv_id and ${ed.seq} = k.seq),
        reactions as (delete from ${messageReactions} ${rx} using k where ${rx.convId} = k.conv_id and ${rx.seq} = k.seq),
        thread_reads as (delete from ${threadReads} ${tr} using k where ${tr.convId} = k.conv_id and ${tr.rootSeq} = k.seq),
        stars as (delete from ${messageStars} ${st} using k where ${st.convId} = k.conv_id and ${st.seq} = k.seq),
        pins as (delete from ${messagePins} ${pn} using k where ${pn.convId} = k.conv_id and ${pn.seq} = k.seq),
        mentions as (delete from ${messageMentions} ${mn} using k where ${mn.convId} = k.conv_id and ${mn.seq} = k.seq),
        hides as (delete from ${messageHides} ${h} using k where ${h.convId} = k.conv_id and ${h.seq} = k.seq)
        delete from ${messages} ${m} using k where ${m.convId} = k.conv_id and ${m.seq} = k.seq
        returning ${m.convId} as conv_id, ${m.seq} as seq`,
);

/**
 * Purges `keys` for everyone on behalf of `actorId`: all or nothing. Every
 * key must be a message the actor can read and the actor must own each
 * one's group; or the actor is an admin, who may purge any message. The
 * purge (one notice per range) is handed to `publisher` once committed.
 */
export async function purgeMessages(
  db: SqlRunner,
  publisher: Publisher,
  actorId: string,
  admin: boolean,
  retention: RetentionClock,
  keys: readonly MessageKey[],
): Promise<PurgeOutcome> {
  const notices: Notice[] = [];
  const outcome = await db.transaction(async (tx): Promise<PurgeOutcome> => {
    // A member finds the messages they can read; an admin (moderation) any
    // message that exists, member or not.
    const bound = keyValues(keys);
    const readable = await tx.rows<{ conv_id: string; seq: number; may_purge: boolean }>(
      purgeableKeys({ ...bound, ...retentionValues(retention), actorId, admin }),
    );
    const found = new Map(readable.map((r) => [messageKeyString({ convId: r.conv_id, seq: r.seq }), r]));
    const missing = keys.find((k) => !found.has(messageKeyString(k)));
    if (missing !== undefined) return { kind: 'not-found', key: missing };
    const refused = admin ? undefined : keys.find((k) => !found.get(messageKeyString(k))!.may_purge);
    if (refused !== undefined) return { kind: 'forbidden', key: refused };
    const gone = await tx.rows<{ conv_id: string; seq: number }>(purgeKeys(bound));
    const seqsByConversation = new Map<string, number[]>();
    for (const r of gone) seqsByConversation.set(r.conv_id, [...(seqsByConversation.get(r.conv_id) ?? []), r.seq]);
    const ranges = [...seqsByConversation].flatMap(([convId, seqs]) => seqRanges(convId, seqs));
    await dropEmptySegments(tx, ranges);
    const entries: ChangeEntry[] = ranges.map((range) => ({ ...range, kind: 'purged' as const, userId: null, subjectId: null }));
    for (const e of await recordChanges(tx, entries)) {
      notices.push({ convId: e.convId, kind: 'purged', seq: e.fromSeq, toSeq: e.toSeq, userId: null, changeSeq: e.changeSeq });
    }
    return { kind: 'purged', count: gone.length };
  });
  if (outcome.kind === 'purged') publisher.publish(notices);
  return outcome;
}

const erase = statement<{ userId: string }>(
  (v) => sql`with erased as (
          update ${messages} set ${bare(messages.erasedAt)} = now()
          where ${messages.senderId} = ${v.userId} and ${messages.erasedAt} is null and ${messages.revokedAt} is null
          returning ${messages.convId} as conv_id, ${messages.seq} as seq),
        bodies as (delete from ${messageBodies} ${b} using erased e where ${b.convId} = e.conv_id and ${b.seq} = e.seq),
        versions as (delete from ${messageEdits} ${ed} using erased e where ${ed.convId} = e.conv_id and ${ed.seq} = e.seq),
        mentions as (delete from ${messageMentions} ${mn} using erased e where ${mn.convId} = e.conv_id and ${mn.seq} = e.seq)
        select conv_id, min(seq) as from_seq, max(seq) as to_seq, count(*)::int as n from erased group by conv_id`,
);

/** Deletes every reaction of `userId`; answers the messages whose reactions changed. */
const eraseReactions = statement<{ userId: string }>(
  (v) => sql`with gone as (delete from ${messageReactions} ${rx} where ${rx.userId} = ${v.userId}
          returning ${rx.convId} as conv_id, ${rx.seq} as seq)
        select distinct conv_id, seq from gone`,
);

/**
 * Erases the text of every message `userId` sent, in every conversation:
 * bodies deleted, rows marked `erased_at` (so seqs stay dense), one `erased`
 * entry per conversation, and the records of archive segments left with no
 * live message. Revoked messages have no text left to serve and are skipped.
 * With `archive` (the process's segment store), archived texts then leave
 * it before this answers (archive/erasure.ts); if that fails, or with no
 * store, they leave at the archiver's next run, which rewrites every
 * segment holding an erased or revoked text (archive/rewrite.ts).
 */
export async function eraseUser(db: SqlRunner, publisher: Publisher, userId: string, archive: SegmentStore | null = null): Promise<number> {
  const notices: Notice[] = [];
  let ranges: SeqRange[] = [];
  let unrecorded: string[] = [];
  const count = await db.transaction(async (tx) => {
    const erased = await tx.rows<{ conv_id: string; from_seq: number; to_seq: number; n: number }>(erase({ userId }));
    ranges = erased.map((r) => ({ convId: r.conv_id, fromSeq: r.from_seq, toSeq: r.to_seq }));
    unrecorded = await dropEmptySegments(tx, ranges);
    await recordChanges(
      tx,
      erased.map((r) => ({ convId: r.conv_id, kind: 'erased' as const, fromSeq: r.from_seq, toSeq: r.to_seq, userId: null, subjectId: userId })),
    );
    // Their reactions leave with them: each message whose reactions changed
    // gets its change entry and, once committed, its live event.
    const reacted = await tx.rows<{ conv_id: string; seq: number }>(eraseReactions({ userId }));
    const entries = reacted.map((r) => ({ convId: r.conv_id, kind: 'reactions_changed' as const, fromSeq: r.seq, toSeq: r.seq, userId: null, subjectId: null }));
    for (const e of await recordChanges(tx, entries)) {
      notices.push({ convId: e.convId, kind: 'reacted', seq: e.fromSeq, toSeq: e.toSeq, userId: null, changeSeq: e.changeSeq });
    }
    return erased.reduce((sum, r) => sum + r.n, 0);
  });
  publisher.publish(notices);
  if (archive !== null) {
    try {
      await withdrawErasedTexts(db, archive, ranges, unrecorded);
    } catch {
      // The erasure has committed and reads no longer serve the texts; the archiver's next run removes what is left.
    }
  }
  return count;
}
