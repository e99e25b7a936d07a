/**
 * SQL pieces every read path shares. The visibility predicate is written here
 * once; pages, jumps, single-message lookups and hides all use it, so a rule
 * added to it (retention, say) reaches every path at once.
 */
import { type SQL, sql } from 'drizzle-orm';

/**
 * "Message `m` is visible to `viewerId`": above the member's clear watermark
 * and not deleted-for-me by the viewer. `clearSeq` is the member row's
 * watermark expression (usually `mb.clear_seq`).
 */
export function visibleTo(m: string, viewerId: string, clearSeq: SQL): SQL {
  const alias = sql.raw(m);
  // A scalar subquery, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an
  // anti-join and, misjudging how many hides a member has, may materialize
  // all of them and compare each against every scanned row (90 ms for a
  // page where a member hid 17,000 messages). A scalar subquery stays one
  // primary-key probe per scanned row, whatever the hide count.
  return sql`${alias}.seq > ${clearSeq} and (
    select true from message_hides h
    where h.conv_id = ${alias}.conv_id and h.user_id = ${viewerId} and h.seq = ${alias}.seq) is null`;
}

/** A timestamptz as an ISO 8601 string in UTC with milliseconds, formatted by PostgreSQL. */
export function isoTime(column: string): SQL {
  return sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
}

/** The columns of a message index row, as `MessageRow` reads them, from alias `m`. */
export function messageColumns(m: string): SQL {
  return sql.raw(`${m}.conv_id as conv_id, ${m}.seq as seq, ${m}.sender_id as sender_id, `).append(
    sql`${isoTime(`${m}.created_at`)} as created_at, ${isoTime(`${m}.revoked_at`)} as revoked_at, ${sql.raw(
      `${m}.revoked_by`,
    )} as revoked_by`,
  );
}

/** A list of (conversation, seq) keys as one pair of array parameters, for `unnest`. */
export function keyArrays(keys: readonly { convId: string; seq: number }[]): SQL {
  return sql`unnest(${sql.param(keys.map((k) => k.convId))}::uuid[], ${sql.param(keys.map((k) => k.seq))}::int8[])`;
}
