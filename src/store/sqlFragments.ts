/**
 * SQL pieces every read path shares, written against the schema
 * (src/db/schema.ts): a table or column renamed there is renamed in every
 * statement, or is a compile error. The visibility rule is written here
 * once, over one floor and one set of hidden ranges: as the predicate for
 * rows looked at one by one (`visibleTo`: anchors, lookups by key, search
 * hits, revokes) and as the walk scans go by (`visibleRun`: pages, their
 * far-side flags, jumps to a time, the inbox's last message and unread
 * count), so a rule added here
 * (retention, say) reaches every path at once.
 *
 * Fragments are parts of statements built once (statement.ts): they take a
 * statement's placeholders, never values.
 */
import { type AnyColumn, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias, type PgTable } from 'drizzle-orm/pg-core';
import { conversations, members, messageHideRanges, messages } from '../db/schema.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import { BatchConversation, distinctConvIds, oneOfBatch } from './batchConversations.ts';
import type { MessageRow } from './rows.ts';
import type { Slots } from './statement.ts';

/** `table` under a name of its own in a statement (`alias(messages, 'm')`), as fragments take it. */
export type Aliased<T extends PgTable> = ReturnType<typeof alias<T, string>>;

/** What a fragment compares with: a statement's placeholder, an expression, or a column (each row its own value). */
export type Operand = Placeholder | SQL | AnyColumn;

/** The conversation a fragment's lookups are in: one bound value or a row's column, or a row's in a batch (`inBatch`). */
export type ConversationOperand = Operand | BatchConversation;

/**
 * `column` is conversation `conv`; in a batch, also one of the batch's
 * conversations, so the lookup reads their shards alone
 * (src/store/batchConversations.ts).
 */
export function sameConversation(column: AnyColumn, conv: ConversationOperand): SQL {
  return conv instanceof BatchConversation ? oneOfBatch(column, conv) : sql`${column} = ${conv}`;
}

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

/**
 * The seq through which conversation `c` is expired at `clock.now`: the rule
 * stated in src/history/retention.ts, and its only implementation
 * (test/integration/retentionRule.test.ts checks it), so reads apply it as a
 * lower bound of the same index range scan. `least` skips nulls, so it is the
 * shorter of the server's and the conversation's limits (`effectivePolicy`);
 * a null limit makes its term 0. The time rule is one probe of the
 * creation-time index: the newest message created before the cut-off.
 * `convId`: the conversation's id as the statement binds it, when it reads
 * one conversation, so its probes are routed by that value (one Citus
 * shard) rather than correlated to `c.id`, which cannot be pruned.
 */
export function expiredThrough(c: Aliased<typeof conversations>, clock: Slots<RetentionValues>, convId: ConversationOperand = c.id): SQL<number> {
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
      where ${sameConversation(e.convId, convId)}
        and ${e.createdAt} < ${clock.now}::timestamptz - ${days} * interval '86400 seconds'
      order by ${e.createdAt} desc, ${e.seq} desc limit 1), 0),
    case when ${days} is null then 0
      else coalesce(${oldestStoredBelow(o, convId)}, ${c.maxSeq}) end)`;
}

/**
 * One below the oldest stored message of conversation `convId`, or null
 * when it has none. In a batch, the first of an ordered range: with the
 * batch's ids PostgreSQL expects under one row (batchConversations.ts), and
 * `min()` over a guess of one row may be planned as an aggregate over the
 * whole conversation instead of one probe of its primary key.
 */
function oldestStoredBelow(o: Aliased<typeof messages>, convId: ConversationOperand): SQL {
  return convId instanceof BatchConversation
    ? sql`(select ${o.seq} - 1 from ${messages} ${o} where ${sameConversation(o.convId, convId)} order by ${o.seq} limit 1)`
    : sql`(select min(${o.seq}) - 1 from ${messages} ${o} where ${sameConversation(o.convId, convId)})`;
}

/**
 * The lowest seq a member can still see is above this: the highest of their
 * clear watermark (`mb.clear_seq`), the seq they joined at while the group
 * shows new members only what came after (`since_joined`), and the
 * conversation's retention cut-off. `convId` as `expiredThrough` takes it.
 */
export function visibleFloor(
  mb: Aliased<typeof members>,
  c: Aliased<typeof conversations>,
  clock: Slots<RetentionValues>,
  convId: ConversationOperand = c.id,
): SQL<number> {
  return sql`greatest(${mb.clearSeq},
    case when ${c.historyVisibility} = 'since_joined' then ${mb.joinedSeq} else 0 end,
    ${expiredThrough(c, clock, convId)})`;
}

const range = alias(messageHideRanges, 'hr');

/**
 * The viewer's hidden range starting nearest below `seq` (`<`) or at or
 * below it (`<=`), as `array[from_seq, to_seq]`, or null: a scalar
 * subquery, so it is probed only where, and when, it is evaluated.
 */
function rangeBelow(convId: ConversationOperand, viewerId: Operand, seq: Operand, compare: '<' | '<='): SQL {
  const h = range;
  return sql`(select array[${h.fromSeq}, ${h.toSeq}] from ${messageHideRanges} ${h}
    where ${sameConversation(h.convId, convId)} and ${h.userId} = ${viewerId} and ${h.fromSeq} ${sql.raw(compare)} ${seq}
    order by ${h.fromSeq} desc limit 1)`;
}

/** The viewer's hidden range starting nearest above `seq`, as `rangeBelow` answers it. */
function rangeAbove(convId: ConversationOperand, viewerId: Operand, seq: Operand): SQL {
  const h = range;
  return sql`(select array[${h.fromSeq}, ${h.toSeq}] from ${messageHideRanges} ${h}
    where ${sameConversation(h.convId, convId)} and ${h.userId} = ${viewerId} and ${h.fromSeq} > ${seq}
    order by ${h.fromSeq} limit 1)`;
}

/**
 * "Seq `seq` of `convId` is deleted-for-me by `viewerId`": the viewer's
 * ranges never overlap, so only the one starting nearest at or below it can
 * cover it. One probe of the ranges' primary key, whatever they hid.
 */
export function hiddenFrom(convId: ConversationOperand, viewerId: Operand, seq: Operand): SQL {
  return sql`coalesce(${rangeBelow(convId, viewerId, seq, '<=')}[2] >= ${seq}, false)`;
}

/**
 * "Message `m` is visible to `viewerId`": above `floor` (the member's
 * `visibleFloor`: clear watermark and retention) and not deleted-for-me by
 * the viewer. The viewer is a placeholder, or a column when every row has
 * its own viewer (live events check all subscribers in one statement).
 * Checked row by row, so a scan filtered by it reads every hidden row it
 * passes: scans of more than a few rows walk with `visibleRun` instead.
 * `convId`: the conversation bound to the statement, when it reads one, so
 * the hide lookup is routed by it rather than by the row's column (or the
 * row's column `inBatch`, when it reads a batch).
 */
export function visibleTo(m: Aliased<typeof messages>, viewerId: Operand, floor: SQL, convId: ConversationOperand = m.convId): SQL {
  // A scalar subquery, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an
  // anti-join and, misjudging how many hides a member has, may materialize
  // all of them and compare each against every scanned row (90 ms for a
  // page where a member hid 17,000 messages). A scalar subquery stays one
  // primary-key probe per row.
  return sql`${m.seq} > ${floor} and not ${hiddenFrom(convId, viewerId, m.seq)}`;
}

/** Where a walk of what a viewer can see goes. */
export interface VisibleRun {
  convId: Operand;
  viewerId: Operand;
  /** The member's `visibleFloor`: the walk answers nothing at or below it. */
  floor: SQL;
  /** Exclusive: `desc` walks down from below it, `asc` up from above it. */
  start: Operand;
  order: 'asc' | 'desc';
  /** The most messages to answer. */
  limit: Operand;
  /**
   * Answer (and count towards `limit`) only messages not sent by this user,
   * as an unread count wants them; unset, every message the viewer can see.
   */
  notSentBy?: Operand;
}

const NEXT = 'nx';
const next = alias(messages, NEXT);
const counted = alias(messages, 'ct');

/**
 * The messages `viewerId` can see in `convId`, the `limit` nearest past
 * `start` in `order`: `visibleTo` as a walk, for scans. A subquery with the
 * columns of `messages` (alias it); rows in no set order.
 *
 * A recursive walk over runs of seqs, each step costing a few index probes
 * whatever lies between: it seeks the next stored message past its
 * position (`limit 1`); if that message lies in the hidden range ahead
 * (carried from step to step, so ranges are probed only when one is
 * passed), it jumps past the range; otherwise it takes the run from that
 * message towards the range, at most as many seqs as the page still needs,
 * and counts what is stored there. Seqs are unique, so a run's range scan
 * reads at most that many rows whatever plan PostgreSQL picks, and every
 * seek is an index-ordered `limit 1`: no plan here waits for statistics.
 * The runs' messages are read once the walk is done. A page thus costs its
 * size plus a few probes per range crossed or gap skipped, never the rows
 * hidden, cleared or expired. A range scan filtered row by row read every
 * hidden row instead (75 ms for a page past 19,900 hidden messages), and
 * without statistics PostgreSQL sorted all 20,000 rows of a fresh
 * conversation for one page (33-37 ms).
 */
export function visibleRun(run: VisibleRun): SQL {
  const { convId, viewerId, floor } = run;
  const x = next;
  const k = counted;
  const down = run.order === 'desc';
  const start = sql`${run.start}::int8`;
  // The start (exclusive) and the hidden range ahead of it. Going up, a
  // range covering the start is passed at once.
  const first = down
    ? sql`select ${start} as pos, ${rangeBelow(convId, viewerId, start, '<')} as ahead`
    : sql`select p.pos, ${rangeAbove(convId, viewerId, sql`p.pos`)} as ahead
        from (select greatest(${start}, ${floor}, coalesce(${rangeBelow(convId, viewerId, sql`greatest(${start}, ${floor})`, '<=')}[2], 0)) as pos offset 0) p`;
  const seek = down ? sql`${x.seq} < w.pos and ${x.seq} > ${floor} order by ${x.seq} desc` : sql`${x.seq} > w.pos order by ${x.seq}`;
  const wanted = sql`(${run.limit} - w.found)`;
  // The message found lies in the range ahead, or past it where the range
  // covers only gaps: either way, jump. Otherwise its run: from it towards
  // the range, `wanted` seqs at most, both ends included.
  const step = down
    ? sql`select coalesce(n.seq <= w.hidden_to, false) as jump,
          greatest(n.seq - ${wanted} + 1, w.hidden_to + 1, ${floor} + 1) as low, n.seq as high`
    : sql`select coalesce(n.seq >= w.hidden_from, false) as jump,
          n.seq as low, least(n.seq + ${wanted} - 1, w.hidden_from - 1) as high`;
  const jumpTo = down ? sql`w.hidden_from` : sql`w.hidden_to`;
  const rangeAfter = down ? rangeBelow(convId, viewerId, jumpTo, '<') : rangeAbove(convId, viewerId, jumpTo);
  const passed = down ? sql`j.low` : sql`j.high`;
  // A run spans at most `wanted` seqs, so counting only others' messages in
  // it still never overshoots the limit; the user's own cost their rows.
  const counts = (row: Aliased<typeof messages>) => (run.notSentBy === undefined ? sql`` : sql` and ${row.senderId} <> ${run.notSentBy}`);
  return sql`with recursive walk(pos, hidden_from, hidden_to, found, low, high) as (
      select f.pos, f.ahead[1], f.ahead[2], 0::int8, null::int8, null::int8 from (${first} offset 0) f
      union all
      select case when j.jump then ${jumpTo} else ${passed} end,
        case when j.jump then j.ahead[1] else w.hidden_from end,
        case when j.jump then j.ahead[2] else w.hidden_to end,
        w.found + j.stored,
        case when j.jump then null else j.low end,
        case when j.jump then null else j.high end
      from walk w
      cross join lateral (select ${x.seq} as seq from ${messages} ${x} where ${x.convId} = ${convId} and ${seek} limit 1) n
      -- offset 0: evaluated once per step; the range probed only on a jump, the run counted only when taken.
      cross join lateral (select t.jump, t.low, t.high,
          case when t.jump then ${rangeAfter} end as ahead,
          case when t.jump then 0 else (select count(*) from ${messages} ${k}
            where ${k.convId} = ${convId} and ${k.seq} between t.low and t.high${counts(k)}) end as stored
        from (${step}) t offset 0) j
      where w.found < ${run.limit})
    select r.* from walk w
    cross join lateral (select ${sql.identifier(NEXT)}.* from ${messages} ${x}
      where ${x.convId} = ${convId} and ${x.seq} between w.low and w.high${counts(x)} offset 0) r`;
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

/**
 * (conversation, seq) keys as a statement binds them: one pair of parallel
 * arrays, for `keyArrays`, and the keys' distinct conversations, named on
 * every conversation-scoped table the statement reads, so it touches the
 * shards of those conversations alone (batchConversations.ts).
 */
export interface KeyValues {
  keyConvIds: string[];
  keySeqs: number[];
  convIds: string[];
}

/** The values of `keys`, for a statement that unnests them with `keyArrays`. */
export function keyValues(keys: readonly { convId: string; seq: number }[]): KeyValues {
  return { keyConvIds: keys.map((k) => k.convId), keySeqs: keys.map((k) => k.seq), convIds: distinctConvIds(keys) };
}

/** The keys bound as `KeyValues`, unnested (alias them `k(conv_id, seq)`). */
export function keyArrays(keys: Slots<KeyValues>): SQL {
  return sql`unnest(${keys.keyConvIds}::uuid[], ${keys.keySeqs}::int8[])`;
}

/** Where each field of a `MessageRow` comes from in `m` (an alias of `messages`). */
const messageSources = (m: Aliased<typeof messages> | typeof messages) =>
  ({
    convId: m.convId,
    seq: m.seq,
    senderId: m.senderId,
    createdAt: isoTime(m.createdAt),
    revokedAt: isoTime(m.revokedAt),
    revokedBy: m.revokedBy,
    editedAt: isoTime(m.editedAt),
    replyToSeq: m.replyToSeq,
    threadRootSeq: m.threadRootSeq,
  }) satisfies { [Field in keyof MessageRow]-?: Source<MessageRow[Field]> };

/** The columns of a message index row from `m` (an alias of `messages`), as a `MessageRow`. */
export function messageColumns(m: Aliased<typeof messages>): SQL {
  return selectList<MessageRow>(messageSources(m));
}

/**
 * `messageColumns` but the conversation id, for a statement that reads one
 * bound conversation and so knows it (pages.ts): a uuid on each of a page's
 * rows cost postgres.js about 25 µs a page of 50 to read.
 */
export function messageColumnsInConversation(m: Aliased<typeof messages>): SQL {
  const { convId: _bound, ...rest } = messageSources(m);
  return selectList<Omit<MessageRow, 'convId'>>(rest);
}

/** The names `messageColumnsInConversation` gives its columns, in its order. */
export const MESSAGE_COLUMN_NAMES_IN_CONVERSATION: readonly string[] = Object.keys(messageSources(messages)).filter((name) => name !== 'convId');

/** One message as one member would act on it: whose, which conversation, which seq, read at which instant. */
export interface ActorMessageValues extends RetentionValues {
  actorId: string;
  convId: string;
  seq: number;
}

/**
 * `from ... where ...` of "message `seq` of `convId` as `actorId` sees it":
 * their membership `mb`, the conversation `c` and the message `m`, which
 * must be visible to them (`visibleTo`). No row: not a member, or nothing
 * they can read. Every write on one message (revoke, edit, reaction, thread
 * read) starts here, so none can act on what its actor could not read.
 */
export function actorMessage(
  mb: Aliased<typeof members>,
  c: Aliased<typeof conversations>,
  m: Aliased<typeof messages>,
  v: Slots<ActorMessageValues>,
): SQL {
  return sql`from ${members} ${mb}
        join ${conversations} ${c} on ${c.id} = ${mb.convId}
        join ${messages} ${m} on ${m.convId} = ${mb.convId} and ${m.seq} = ${v.seq}
        where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.actorId}
          and ${visibleTo(m, v.actorId, visibleFloor(mb, c, v, v.convId), v.convId)}`;
}
