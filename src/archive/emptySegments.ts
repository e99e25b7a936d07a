/**
 * The database's half of retention and erasure in the archive: inside the
 * transaction that purges, expires or erases messages, the records of the
 * segments left with no live message go too, so no record ever points at
 * texts nobody may read. Their objects stay until the next archiver run
 * removes them as unrecorded (archiver.ts), and segments only partly
 * emptied are rewritten by that run (rewrite.ts): neither needs the store
 * inside a transaction, so purges and erasures stay short, store-free and
 * crash-safe (a crash after commit leaves nothing the next run does not see).
 */
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { archiveSegments, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { Aliased } from '../store/sqlFragments.ts';
import { statement } from '../store/statement.ts';

const s = alias(archiveSegments, 's');
const a = alias(archiveSegments, 'a');
const m = alias(messages, 'm');

/** A message is live while it is neither revoked nor erased: only then is its archived text ever read. */
export function isLive(message: Aliased<typeof messages>): SQL {
  return sql`${message.revokedAt} is null and ${message.erasedAt} is null`;
}

/** Seqs `fromSeq` to `toSeq` of one conversation. */
export interface SeqRange {
  convId: string;
  fromSeq: number;
  toSeq: number;
}

const dropEmpty = statement<{ convIds: string[]; fromSeqs: number[]; toSeqs: number[] }>(
  (v) => sql`with candidates as (
        select distinct x.conv_id, x.from_seq
        from unnest(${v.convIds}::uuid[], ${v.fromSeqs}::int8[], ${v.toSeqs}::int8[]) as r(conv_id, from_seq, to_seq)
        cross join lateral (
          (select ${a.convId} as conv_id, ${a.fromSeq} as from_seq from ${archiveSegments} ${a}
            where ${a.convId} = r.conv_id and ${a.fromSeq} <= r.from_seq order by ${a.fromSeq} desc limit 1)
          union all
          (select ${a.convId}, ${a.fromSeq} from ${archiveSegments} ${a}
            where ${a.convId} = r.conv_id and ${a.fromSeq} > r.from_seq and ${a.fromSeq} <= r.to_seq)) x)
    delete from ${archiveSegments} ${s} using candidates k
    where ${s.convId} = k.conv_id and ${s.fromSeq} = k.from_seq
      and not exists (select 1 from ${messages} ${m}
        where ${m.convId} = ${s.convId} and ${m.seq} >= ${s.fromSeq} and ${m.seq} <= ${s.toSeq} and ${isLive(m)})
    returning ${s.key} as key`,
);

/**
 * Deletes the records of the segments overlapping `ranges` that hold no
 * live message any more, in `tx` (call it after the statement that removed
 * or withdrew the messages, in the same transaction). Answers the keys of
 * the objects now unrecorded.
 */
export async function dropEmptySegments(tx: SqlRunner, ranges: readonly SeqRange[]): Promise<string[]> {
  if (ranges.length === 0) return [];
  const rows = await tx.rows<{ key: string }>(
    dropEmpty({ convIds: ranges.map((r) => r.convId), fromSeqs: ranges.map((r) => r.fromSeq), toSeqs: ranges.map((r) => r.toSeq) }),
  );
  return rows.map((r) => r.key);
}
