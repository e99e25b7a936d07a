/**
 * "Delete for me": hiding messages from one member, all or nothing. What a
 * member hid is stored as ranges (`message_hide_ranges`), merged with their
 * neighbours whenever no message lies between, so pages skip it in a few
 * seeks however much it is; the change feed still has an entry per message.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageHideRanges, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { recordChanges } from './changes.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import type { NotFound } from './outcome.ts';
import {
  bare,
  bareList,
  hiddenFrom,
  keyArrays,
  type KeyValues,
  keyValues,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  visibleFloor,
} from './sqlFragments.ts';
import { statement } from './statement.ts';

/** What a hide did. */
export type HideOutcome = { kind: 'hidden'; newlyHidden: number } | (NotFound & { key: MessageKey });

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const h = alias(messageHideRanges, 'h');

/**
 * The keys the viewer may read (hidden ones included), locked against a
 * concurrent purge; the viewer's member rows are locked too, so two hides
 * of theirs in one conversation merge ranges one after the other.
 */
const readableKeys = statement<KeyValues & RetentionValues & { viewerId: string }>(
  (v) => sql`select ${m.convId} as conv_id, ${m.seq} as seq
        from ${keyArrays(v)} as k(conv_id, seq)
        join ${members} ${mb} on ${mb.convId} = k.conv_id and ${mb.userId} = ${v.viewerId}
        join ${conversations} ${c} on ${c.id} = k.conv_id
        join ${messages} ${m} on ${m.convId} = k.conv_id and ${m.seq} = k.seq
        where ${m.seq} > ${visibleFloor(mb, c, v)}
        for share of ${m} for no key update of ${mb}`,
);

/**
 * Hides the keys not hidden yet and answers them, in the order given. Each
 * of them, and the viewer's ranges just below and above each, are put in
 * seq order per conversation; neighbours with no message between them
 * (adjacent, or only purged seqs between) become one range, which replaces
 * the ranges it swallowed. Every probe is a `limit 1` seek of a primary key.
 */
const hideKeys = statement<KeyValues & { viewerId: string }>(
  (v) => sql`with
        fresh as (
          select k.conv_id, k.seq, min(k.ord) as ord
          from unnest(${v.keyConvIds}::uuid[], ${v.keySeqs}::int8[]) with ordinality as k(conv_id, seq, ord)
          where not ${hiddenFrom(sql`k.conv_id`, v.viewerId, sql`k.seq`)}
          group by k.conv_id, k.seq),
        pieces as (
          select conv_id, seq as from_seq, seq as to_seq from fresh
          union
          select f.conv_id, n.from_seq, n.to_seq from fresh f cross join lateral (
            (select ${h.fromSeq} as from_seq, ${h.toSeq} as to_seq from ${messageHideRanges} ${h}
              where ${h.convId} = f.conv_id and ${h.userId} = ${v.viewerId} and ${h.fromSeq} < f.seq
              order by ${h.fromSeq} desc limit 1)
            union all
            (select ${h.fromSeq}, ${h.toSeq} from ${messageHideRanges} ${h}
              where ${h.convId} = f.conv_id and ${h.userId} = ${v.viewerId} and ${h.fromSeq} > f.seq
              order by ${h.fromSeq} limit 1)) n),
        ordered as (
          select p.*, lag(p.to_seq) over (partition by p.conv_id order by p.from_seq) as before from pieces p),
        starts as (
          select o.conv_id, o.from_seq, o.to_seq,
            -- A piece starts a new range when a message lies between it and the piece before.
            o.before is null or coalesce((select ${m.seq} from ${messages} ${m}
              where ${m.convId} = o.conv_id and ${m.seq} > o.before order by ${m.seq} limit 1) < o.from_seq, false) as starts
          from ordered o),
        runs as (
          select s.*, sum(case when s.starts then 1 else 0 end) over (partition by s.conv_id order by s.from_seq) as run from starts s),
        merged as (
          select conv_id, min(from_seq) as from_seq, max(to_seq) as to_seq from runs group by conv_id, run),
        swallowed as (
          delete from ${messageHideRanges} ${h} using merged g
          where ${h.convId} = g.conv_id and ${h.userId} = ${v.viewerId} and ${h.fromSeq} > g.from_seq and ${h.fromSeq} <= g.to_seq),
        saved as (
          insert into ${messageHideRanges} (${bareList(messageHideRanges.convId, messageHideRanges.userId, messageHideRanges.fromSeq, messageHideRanges.toSeq)})
          select g.conv_id, ${v.viewerId}, g.from_seq, g.to_seq from merged g
          on conflict (${bareList(messageHideRanges.convId, messageHideRanges.userId, messageHideRanges.fromSeq)})
          do update set ${bare(messageHideRanges.toSeq)} = excluded.${bare(messageHideRanges.toSeq)})
        select conv_id, seq from fresh order by ord`,
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
    const hidden = await tx.rows<{ conv_id: string; seq: number }>(hideKeys({ ...bound, viewerId }));
    // The viewer's other devices learn of it from the change feed, message by message.
    await recordChanges(
      tx,
      hidden.map((r) => ({ convId: r.conv_id, kind: 'hidden' as const, fromSeq: r.seq, toSeq: r.seq, userId: viewerId, subjectId: null })),
    );
    return { kind: 'hidden', newlyHidden: hidden.length };
  });
}
