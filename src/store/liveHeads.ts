/**
 * Where conversations stand, for the hubs' audit of live events
 * (src/realtime/hub.ts): what a process's subscribers should have been told
 * of by now. One statement answers for every conversation a process has
 * subscribers on.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversationChanges, conversations } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { statement } from './statement.ts';

const c = alias(conversations, 'c');
const ch = alias(conversationChanges, 'ch');

/** One conversation's position. */
export interface LiveHead {
  convId: string;
  /** Every message up to this seq has been sent (and announced, unless its publication was lost). */
  maxSeq: number;
  /** The change feed's newest entry number, of any kind. */
  changeSeq: number;
  /** The entries announced live (revokes, edits, reaction changes, pins, purges) numbered above the `afterChangeSeq` asked about, ascending. */
  announced: number[];
}

const heads = statement<{ convIds: string[]; afters: (number | null)[] }>(
  (v) => sql`select ${c.id} as conv_id, ${c.maxSeq} as max_seq, ${c.changeSeq} as change_seq,
      (select coalesce(json_agg(${ch.changeSeq} order by ${ch.changeSeq}), '[]'::json) from ${conversationChanges} ${ch}
        where ${ch.convId} = ${c.id} and ${ch.changeSeq} > k.after
          -- The kinds announced live: revokes.ts, edits.ts, reactions.ts, pins.ts and lifecycle.ts publish one notice per such entry.
          and ${ch.kind} in ('revoked', 'edited', 'reactions_changed', 'pinned', 'unpinned', 'purged')) as announced
    from unnest(${v.convIds}::uuid[], ${v.afters}::int8[]) as k(id, after)
    join ${conversations} ${c} on ${c.id} = k.id`,
);

/**
 * The position of each conversation in `asked` (one statement; a
 * conversation that does not exist is left out). `afterChangeSeq` null: no
 * entries are listed. Entries are read from the primary key forward from
 * `afterChangeSeq`, so the audit reads only what changed since it last looked.
 */
export async function readLiveHeads(db: SqlRunner, asked: readonly { convId: string; afterChangeSeq: number | null }[]): Promise<LiveHead[]> {
  if (asked.length === 0) return [];
  const rows = await db.rows<{ conv_id: string; max_seq: number; change_seq: number; announced: number[] }>(
    heads({ convIds: asked.map((a) => a.convId), afters: asked.map((a) => a.afterChangeSeq) }),
  );
  return rows.map((r) => ({ convId: r.conv_id, maxSeq: r.max_seq, changeSeq: r.change_seq, announced: r.announced }));
}
