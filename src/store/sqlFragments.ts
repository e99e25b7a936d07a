/**
 * SQL pieces every read path shares, written against the schema
 * (src/db/schema.ts): a table or column renamed there is renamed in every
 * statement, or is a compile error. The visibility predicate is written here
 * once; pages, jumps, single-message lookups and hides all use it, so a rule
 * added to it (retention, say) reaches every path at once.
 *
 * Fragments are parts of statements built once (statement.ts): they take a
 * statement's placeholders, never values.
 */
import { type AnyColumn, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias, type PgTable } from 'drizzle-orm/pg-core';
import { type conversations, type members, messageHides, messages } from '../db/schema.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import type { MessageRow } from './rows.ts';
import type { Slots } from './statement.ts';

/** `table` under a name of its own in a statement (`alias(messages, 'm')`), as fragments take it. */
export type Aliased<T extends PgTable> = ReturnType<typeof alias<T, string>>;

/** What a fragment compares with: a statement's placeholder, an expression, or a column (each row its own value). */
export type Operand = Placeholder | SQL | AnyColumn;

/** The server's retention limits and the instant a request reads at. */
export interface RetentionClock {
  server: RetentionPolicy;
  now: Date;
}

/** A retention clock as a statement binds it. */
export interface RetentionValues {
  serverDays: number | null;
  serverMaxMessages: number | null;
  /** ISO 8601. */
  now: string;
}

/** The values of `clock`, for a statement that applies retention. */
export function retentionValues(clock: RetentionClock): RetentionValues {
  return { serverDays: clock.server.days, serverMaxMessages: clock.server.maxMessages, now: clock.now.toISOString() };
}

const newestExpired = alias(messages, 'e');
const oldestStored = alias(messages, 'o');
const hide = alias(messageHides, 'h');

/**
 * The seq through which conversation `c` is expired at `clock.now`: the rule
 * stated in src/history/retention.ts, and its only implementation
 * (test/integration/retentionRule.test.ts checks it), so reads apply it as a
 * lower bound of the same index range scan. `least` skips nulls, so it is the
 * shorter of the server's and the conversation's limits (`effectivePolicy`);
 * a null limit makes its term 0. The time rule is one probe of the
 * creation-time index: the newest message created before the cut-off.
 */
export function expiredThrough(c: Aliased<typeof conversations>, clock: Slots<RetentionValues>): SQL<number> {
  const e = newestExpired;
  const o = oldestStored;
  const days = sql`least(${c.retentionDays}, ${clock.serverDays}::int)`;
  // Under a time rule, seqs below the oldest stored message are gone too:
  // once the purge has deleted the expired messages, no stored message is
  // older than the cut-off, and without this term the cut-off would fall
  // back (and `goneThroughSeq` with it) as if they had never expired.
  return sql`greatest(
    coalesce(${c.maxSeq} - least(${c.retentionMaxMessages}, ${clock.serverMaxMessages}::int), 0),
    coalesce((select ${e.seq} from ${messages} ${e}
      where ${e.convId} = ${c.id}
        and ${e.createdAt} < ${clock.now}::timestamptz - ${days} * interval '86400 seconds'
      order by ${e.createdAt} desc, ${e.seq} desc limit 1), 0),
    case when ${days} is null then 0
      else coalesce((select min(${o.seq}) - 1 from ${messages} ${o} where ${o.convId} = ${c.id}), ${c.maxSeq}) end)`;
}

/**
 * The lowest seq a member can still see is above this: the highest of their
 * clear watermark (`mb.clear_seq`), the seq they joined at while the group
 * shows new members only what came after (`since_joined`), and the
 * conversation's retention cut-off.
 */
export function visibleFloor(mb: Aliased<typeof members>, c: Aliased<typeof conversations>, clock: Slots<RetentionValues>): SQL<number> {
  return sql`greatest(${mb.clearSeq},
    case when ${c.historyVisibility} = 'since_joined' then ${mb.joinedSeq} else 0 end,
    ${expiredThrough(c, clock)})`;
}

/**
 * "Message `m` is visible to `viewerId`": above `floor` (the member's
 * `visibleFloor`: clear watermark and retention) and not deleted-for-me by
 * the viewer. The viewer is a placeholder, or a column when every row has
 * its own viewer (live events check all subscribers in one statement).
 */
export function visibleTo(m: Aliased<typeof messages>, viewerId: Operand, floor: SQL): SQL {
  const h = hide;
  // A scalar subquery, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an
  // anti-join and, misjudging how many hides a member has, may materialize
  // all of them and compare each against every scanned row (90 ms for a
  // page where a member hid 17,000 messages). A scalar subquery stays one
  // primary-key probe per scanned row, whatever the hide count.
  return sql`${m.seq} > ${floor} and (
    select true from ${messageHides} ${h}
    where ${h.convId} = ${m.convId} and ${h.userId} = ${viewerId} and ${h.seq} = ${m.seq}) is null`;
}

/** A timestamptz column as an ISO 8601 string in UTC with milliseconds, formatted by PostgreSQL. */
export function isoTime<Column extends AnyColumn>(column: Column): SQL<Column['_']['notNull'] extends true ? string : string | null> {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Where a row's field comes from: an expression of its type, or a column holding it (as the schema types it). */
export type Source<T> = SQL<T> | (AnyColumn & { readonly _: { readonly data: NonNullable<T> } });

/**
 * A select list naming each output column after a field of `Row`
 * (`"m"."conv_id" as "convId"`), so the statement's rows are `Row`s as they
 * come: no mapping by hand, and a field left out is a compile error.
 */
export function selectList<Row>(sources: { [Field in keyof Row]-?: Source<Row[Field]> }): SQL {
  return sql.join(
    Object.entries<SQL | AnyColumn>(sources).map(([field, source]) => sql`${source} as ${sql.identifier(field)}`),
    sql`, `,
  );
}

/** A column's bare name (`"read_seq"`), where SQL takes no table: SET targets, INSERT and conflict column lists. */
export function bare(column: AnyColumn): SQL {
  return sql`${sql.identifier(column.name)}`;
}

/** Bare column names, comma-separated: an INSERT's column list. */
export function bareList(...columns: AnyColumn[]): SQL {
  return sql.join(columns.map(bare), sql`, `);
}

/** (conversation, seq) keys as a statement binds them: one pair of parallel arrays, for `keyArrays`. */
export interface KeyValues {
  keyConvIds: string[];
  keySeqs: number[];
}

/** The values of `keys`, for a statement that unnests them with `keyArrays`. */
export function keyValues(keys: readonly { convId: string; seq: number }[]): KeyValues {
  return { keyConvIds: keys.map((k) => k.convId), keySeqs: keys.map((k) => k.seq) };
}

/** The keys bound as `KeyValues`, unnested (alias them `k(conv_id, seq)`). */
export function keyArrays(keys: Slots<KeyValues>): SQL {
  return sql`unnest(${keys.keyConvIds}::uuid[], ${keys.keySeqs}::int8[])`;
}

/** The columns of a message index row from `m` (an alias of `messages`), as a `MessageRow`. */
export function messageColumns(m: Aliased<typeof messages>): SQL {
  return selectList<MessageRow>({
    convId: m.convId,
    seq: m.seq,
    senderId: m.senderId,
    createdAt: isoTime(m.createdAt),
    revokedAt: isoTime(m.revokedAt),
    revokedBy: m.revokedBy,
  });
}
