/**
 * SQL pieces every read path shares. The visibility predicate is written here
 * once; pages, jumps, single-message lookups and hides all use it, so a rule
 * added to it (retention, say) reaches every path at once.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { RetentionPolicy } from '../history/retention.ts';

/** The server's retention limits and the instant a request reads at. */
export interface RetentionClock {
  server: RetentionPolicy;
  now: Date;
}

/**
 * The seq through which conversation `c` (an alias of `conversations`) is
 * expired at `clock.now`: the rule stated in src/history/retention.ts, and
 * its only implementation (test/integration/retentionRule.test.ts checks it),
 * so reads apply it as a lower bound of the same index range scan. `least`
 * skips nulls, so it is the shorter of the server's and the conversation's
 * limits (`effectivePolicy`); a null limit makes its term 0. The time rule is
 * one probe of the creation-time index: the newest message created before
 * the cut-off.
 */
export function expiredThrough(c: string, clock: RetentionClock): SQL {
  const alias = sql.raw(c);
  const days = sql`least(${alias}.retention_days, ${clock.server.days}::int)`;
  // Under a time rule, seqs below the oldest stored message are gone too:
  // once the purge has deleted the expired messages, no stored message is
  // older than the cut-off, and without this term the cut-off would fall
  // back (and `goneThroughSeq` with it) as if they had never expired.
  return sql`greatest(
    coalesce(${alias}.max_seq - least(${alias}.retention_max_messages, ${clock.server.maxMessages}::int), 0),
    coalesce((select e.seq from messages e
      where e.conv_id = ${alias}.id
        and e.created_at < ${clock.now.toISOString()}::timestamptz - ${days} * interval '86400 seconds'
      order by e.created_at desc, e.seq desc limit 1), 0),
    case when ${days} is null then 0
      else coalesce((select min(o.seq) - 1 from messages o where o.conv_id = ${alias}.id), ${alias}.max_seq) end)`;
}

/**
 * The lowest seq a member can still see is above this: the highest of their
 * clear watermark (`mb.clear_seq`), the seq they joined at while the group
 * shows new members only what came after (`since_joined`), and the
 * conversation's retention cut-off.
 */
export function visibleFloor(mb: string, c: string, clock: RetentionClock): SQL {
  const member = sql.raw(mb);
  const conversation = sql.raw(c);
  return sql`greatest(${member}.clear_seq,
    case when ${conversation}.history_visibility = 'since_joined' then ${member}.joined_seq else 0 end,
    ${expiredThrough(c, clock)})`;
}

/**
 * "Message `m` is visible to `viewerId`": above `floor` (the member's
 * `visibleFloor`: clear watermark and retention) and not deleted-for-me by
 * the viewer. The viewer is a user id, or a column when every row has its
 * own viewer (live events check all subscribers in one statement).
 */
export function visibleTo(m: string, viewerId: string | SQL, floor: SQL): SQL {
  const alias = sql.raw(m);
  // A scalar subquery, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an
  // anti-join and, misjudging how many hides a member has, may materialize
  // all of them and compare each against every scanned row (90 ms for a
  // page where a member hid 17,000 messages). A scalar subquery stays one
  // primary-key probe per scanned row, whatever the hide count.
  return sql`${alias}.seq > ${floor} and (
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
