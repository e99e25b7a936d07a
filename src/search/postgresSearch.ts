/**
 * Search on PostgreSQL (and PGlite): the vectors live on `message_bodies`
 * (`search_terms`, one GIN index), written by the send statement, every
 * lexeme behind its conversation's key (see `conversationSearchKey`), and a
 * search is ONE statement whose permission filter comes before its limit:
 *
 * 1. `scope`: the viewer's member rows (all of them, or the one conversation
 *    asked for; with senders, only those a sender wrote in), each with its
 *    visible floor (clear watermark, since-joined floor, retention
 *    cut-off), the low end of the search (the floor, or the last seq sent at
 *    or before `sentAfter`) and the seq the cursor (or the first message sent
 *    at or after `sentBefore`) stops at.
 * 2. `heads`: per conversation, its newest hit: one the viewer may see
 *    (above the floor, not deleted for them, not revoked or erased) that
 *    passes the filter. A walk finds it: down the primary key through the
 *    RECENT_WINDOW seqs below the stop, testing each row, and only if none
 *    there is a hit, the whole GIN lookup below them. A common word is found
 *    in the first few rows; a rare one's lookup is short.
 * 3. `bar`: the (size + 1)-th newest head. Every hit on the page is at or
 *    above it, so only a conversation whose head is newer can add a hit.
 * 4. `rest`: for those conversations, the same walk below the head, down to
 *    the bar (one probe of (conv_id, created_at, seq) says where it falls),
 *    up to `size` hits, the window now DEEPER_WINDOW_PER_HIT seqs a hit.
 * 5. Heads and rest, newest first across conversations, cut at `size + 1`;
 *    only then are the texts read, for the snippets.
 *
 * A page thus checks about one hit per conversation and the page's own,
 * where checking each conversation's first `size + 1` (the design before)
 * read 2,100 candidates and 25,000 buffers for a page of 20 across 100
 * conversations whose newest messages did not match.
 *
 * Steps 3-4 rely on creation time following seq within a conversation
 * (sends stamp `created_at` no earlier than the previous message), so
 * everything below a conversation's head is older than the head; the
 * time filter's seq bounds rely on it too (each hit is also checked against
 * the times themselves).
 *
 * A filter never cuts a page: its conditions are part of steps 2 and 4,
 * tested on each candidate before the limit. What steps 2 and 4 walk (the
 * "source") is the smallest set that must hold every hit: a conversation's
 * pins (at most 50) when `pinned: true`, else the viewer's and everyone's
 * mentions (`mentionsMe: true`), else the viewer's stars (`starred: true`),
 * each a range of its own index in seq order, testing the words (if any)
 * on the body row; else the words' postings as above; else, with no words,
 * the messages themselves down their primary key, the window and the bar
 * working as for words. Senders, `hasReplies` and the `false` conditions
 * are probes of one candidate each: a sender match is a column, pins and
 * stars one primary-key probe, mentions two, replies one probe of the
 * thread index that stops at the first reply the viewer can see. Only warm
 * bodies are hits (archived ones are not searched), with words or without.
 *
 * Narrowed to one conversation, every lookup names that conversation as
 * the bound value, never as a column of another row (`conversationOf`), so
 * the statement prunes to its one shard (one Citus router query); across
 * the viewer's conversations it reads the shards of all of them.
 *
 * Revokes, purges, erasures and the retention purge delete body rows, so
 * their index entries go in the same statement; clears, hides, membership
 * and retention not yet purged are the filter of steps 1-4, evaluated at the
 * request's instant. Nothing about the viewer's conversations comes from the
 * client.
 */
import { type AnyColumn, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messageMentions, messagePins, messages, messageStars } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { MessageFilter } from '../history/messageFilter.ts';
import type { SearchPosition } from '../history/searchCursor.ts';
import { QUERY_KEY_MARK, SEARCH_KEY_BYTES } from '../history/searchText.ts';
import { type MessageRow, messageRowOf } from '../store/rows.ts';
import { hiddenFrom, messageColumns, type RetentionValues, retentionValues, visibleFloor, visibleTo } from '../store/sqlFragments.ts';
import { type Slots, type Statement, statement } from '../store/statement.ts';
import { NOT_FOUND } from '../store/outcome.ts';
import type { SearchBackend, SearchOutcome, SearchRequest } from './backend.ts';

type HitRow = MessageRow & { text: string; created_micros: number };

/**
 * How many seqs below the stop a conversation's walk for its newest hit
 * tests row by row before it turns to the GIN lookup. The walk stops at the
 * first hit, so a common word costs a few rows whatever the window; the
 * window is what a word absent from it pays per conversation before its
 * lookup. Walking 100 rows costs about 0.06 ms a conversation, a common
 * word's lookup (about 250 matches, each a heap visit) 0.16-0.25 ms: a
 * window near what one lookup costs bounds both cases to about twice their
 * best. Measured on the bench data with 63 non-matching messages atop each
 * of the searcher's 100 conversations (two full runs' sends), the 14 bench
 * queries once each, statement alone: 48 took 248 ms in all (every common
 * word fell to the lookups), 128 took 102 and 256 107; the word in no
 * message took 5.4, 10.7 and 17.4 ms. With 16 new messages atop each, 16
 * took 245 ms, 32 84 and 48 54-85.
 */
export const RECENT_WINDOW = 128;
/**
 * How many seqs a hit below the head the rest's walk tests row by row
 * (160 for a page of 20): a word in one message in eight fills the page
 * from the walk, without the conversation's whole GIN lookup.
 */
const DEEPER_WINDOW_PER_HIT = 8;

/** `conversationSearchKey` in SQL, of the uuid `column`. */
export function searchKeySql(column: AnyColumn | SQL): SQL {
  return sql`encode(substring(decode(md5(${column}::text), 'hex') from 1 for ${sql.raw(String(SEARCH_KEY_BYTES))}), 'base64')`;
}

/** The query as a `tsquery` for the conversation whose search key is `key`. */
function keyedQuery(template: Placeholder, key: SQL): SQL {
  return sql`replace(${template}::text, ${QUERY_KEY_MARK}::text, chr(39) || ${key})::tsquery`;
}

/** What a search statement binds; a value its shape does not use may be anything. */
interface SearchValues extends RetentionValues {
  viewerId: string;
  tsqueryTemplate: string;
  size: number;
  /** `size + 1`. */
  limit: number;
  /** The conversation searched; unused when searching all of the viewer's. */
  convId: string;
  /** The cursor; unused on the first page. */
  afterMicros: number;
  afterConvId: string;
  afterSeq: number;
  /** The filter's senders and times (ISO 8601); its booleans are in the shape. */
  senderIds: string[];
  sentAfter: string;
  sentBefore: string;
}

/**
 * What tells one search statement's text from another's: everything but
 * the values. Each shape is its own statement (rendered on first use), so
 * PostgreSQL plans each for the conditions it has, never around
 * conditions that might be there.
 */
interface SearchShape {
  /** One conversation, or all of the viewer's. */
  narrowed: boolean;
  /** After a cursor. */
  paged: boolean;
  /** A query's words; false: the filter alone. */
  words: boolean;
  senders: boolean;
  sentAfter: boolean;
  sentBefore: boolean;
  mentionsMe: boolean | null;
  starred: boolean | null;
  pinned: boolean | null;
  hasReplies: boolean | null;
}

/** What steps 2 and 4 walk, per conversation, in seq order (see the module comment). */
type Source = 'pins' | 'mentions' | 'stars' | 'words' | 'replies' | 'messages';

/** The smallest set that must hold every hit of `shape`. */
function sourceOf(shape: SearchShape): Source {
  if (shape.pinned === true) return 'pins';
  if (shape.mentionsMe === true) return 'mentions';
  if (shape.starred === true) return 'stars';
  if (shape.words) return 'words';
  return shape.hasReplies === true ? 'replies' : 'messages';
}

const m = alias(messages, 'm');
const e = alias(messages, 'e');
const r = alias(messages, 'r');
const rt = alias(messages, 'rt');
const b = alias(messageBodies, 'b');
const wb = alias(messageBodies, 'wb');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const mm = alias(messageMentions, 'mm');
const st = alias(messageStars, 'st');
const pn = alias(messagePins, 'pn');

/** How a statement names the conversation of the rows it looks up by (see `conversationOf`). */
interface ConversationOf {
  /** Narrowed to one conversation. */
  narrowed: boolean;
  /** The conversation of row `column`, as a lookup names it. */
  of(column: AnyColumn | SQL): SQL;
}

/**
 * How the statement of `shape` names the conversation of a row it looks
 * up by: narrowed to one conversation, that conversation as bound, so
 * PostgreSQL prunes each lookup at plan time (as Citus routes) where a
 * correlated column (`s.conv_id`, `m.conv_id`) prunes nothing and reads
 * every shard; across conversations, the row's own column.
 */
function conversationOf(shape: SearchShape, v: Slots<SearchValues>): ConversationOf {
  return shape.narrowed ? { narrowed: true, of: () => sql`${v.convId}::uuid` } : { narrowed: false, of: (column) => sql`${column}` };
}

/**
 * Joins message `m` at `seq` of row `row`'s conversation: one primary-key
 * probe per candidate, fenced, so the probe is all PostgreSQL can do. As a
 * plain join it may misjudge the range of the conversation a filter leaves
 * and rescan that range for every candidate instead: narrowed, two senders
 * in one conversation (1 row estimated, 283 found; a word and two senders
 * in one conversation of the bench data: 23,469 buffers, against 2,111
 * fenced); across conversations, on small tables without statistics, every
 * message of each conversation for each one's newest hit (2,880 rows read
 * for 30 hits in test/integration/searchFilters.test.ts's costs).
 */
function messageAt(conv: ConversationOf, row: SQL, seq: SQL): SQL {
  return keyedRowAt(messages, m, conv, row, seq);
}

/** `messageAt` for either table keyed by (conv_id, seq), as alias `as`. */
function keyedRowAt(table: typeof messages | typeof messageBodies, as: typeof m | typeof b, conv: ConversationOf, row: SQL, seq: SQL): SQL {
  return sql`cross join lateral (select ${as}.* from ${table} ${as} where ${as.convId} = ${conv.of(row)} and ${as.seq} = ${seq} offset 0) ${as}`;
}

/**
 * Whether `from` (a `from ... where ...`) finds a row: a scalar subquery,
 * so it stays a probe of one candidate, evaluated only when reached; EXISTS
 * may become a join that reads a whole table (see `visibleTo`).
 */
function probe(from: SQL): SQL {
  return sql`coalesce((select true ${from} limit 1), false)`;
}

/**
 * The filter's conditions on candidate `m` of scope row `s` (the views are
 * the candidate's own), less what `source` already guarantees. A candidate
 * that no word lookup found must have a warm body holding the words, if
 * there are any; a pin, star or mention source needs no second look at its
 * own condition.
 */
function filterConditions(shape: SearchShape, source: Source, v: Slots<SearchValues>, conv: ConversationOf): SQL[] {
  const parts: SQL[] = [];
  if (source !== 'words') {
    const body = sql`from ${messageBodies} ${wb} where ${wb.convId} = ${conv.of(m.convId)} and ${wb.seq} = ${m.seq}`;
    parts.push(shape.words ? sql`coalesce((select ${wb.searchTerms} @@ s.search_query ${body}), false)` : probe(body));
  }
  if (shape.senders) parts.push(sql`${m.senderId} = any(${v.senderIds}::text[])`);
  if (shape.sentAfter) parts.push(sql`${m.createdAt} > ${v.sentAfter}::timestamptz`);
  if (shape.sentBefore) parts.push(sql`${m.createdAt} < ${v.sentBefore}::timestamptz`);
  if (shape.mentionsMe !== null) {
    // Your own messages never mention you, whoever they name.
    const named = probe(sql`from ${messageMentions} ${mm} where ${mm.convId} = ${conv.of(m.convId)} and ${mm.seq} = ${m.seq} and ${mm.userId} in (${v.viewerId}, '')`);
    const notMine = sql`${m.senderId} <> ${v.viewerId}`;
    parts.push(source === 'mentions' ? notMine : shape.mentionsMe ? sql`${notMine} and ${named}` : sql`not (${notMine} and ${named})`);
  }
  if (shape.starred !== null && source !== 'stars') {
    const starred = probe(sql`from ${messageStars} ${st} where ${st.convId} = ${conv.of(m.convId)} and ${st.seq} = ${m.seq} and ${st.userId} = ${v.viewerId}`);
    parts.push(shape.starred ? starred : sql`not ${starred}`);
  }
  if (shape.pinned !== null && source !== 'pins') {
    const pinned = probe(sql`from ${messagePins} ${pn} where ${pn.convId} = ${conv.of(m.convId)} and ${pn.seq} = ${m.seq}`);
    parts.push(shape.pinned ? pinned : sql`not ${pinned}`);
  }
  if (shape.hasReplies !== null) {
    // As `replyCount` counts them: the thread's replies the viewer can see.
    // Replies come after their root, so above the floor as it is: only the
    // hide is tested, and the thread index is the one range to read.
    const replied = probe(
      sql`from ${messages} ${r} where ${r.convId} = ${conv.of(m.convId)} and ${r.threadRootSeq} = ${m.seq} and not ${hiddenFrom(conv.of(r.convId), v.viewerId, r.seq)}`,
    );
    parts.push(shape.hasReplies ? replied : sql`not ${replied}`);
  }
  return parts;
}

/** `conditions` joined with `and`, after a leading `and`; empty when there are none. */
function andAll(conditions: SQL[]): SQL {
  return conditions.length === 0 ? sql`` : sql` and ${sql.join(conditions, sql` and `)}`;
}

/** Which seqs of scope row `s` a walk covers: strictly between `low` (at or above the floor) and `high`, at most `limit` hits. */
interface Span {
  low: SQL;
  high: SQL;
  limit: SQL;
}

/**
 * The first `span.limit` candidates of scope row `s` from `source` in
 * `span`, newest first, that the viewer may see and that pass `filter`:
 * rows of (conv_id, seq, created_at). The words below the window have
 * their own form (`olderWords`).
 */
function candidates(source: Exclude<Source, 'words'> | 'words in window', v: Slots<SearchValues>, conv: ConversationOf, span: Span, filter: SQL[]): SQL {
  const { low, high, limit } = span;
  const columns = sql`select ${m.convId} as conv_id, ${m.seq} as seq, ${m.createdAt} as created_at`;
  const shown = sql`${m.revokedAt} is null and ${m.erasedAt} is null`;
  const scoped = conv.of(sql`s.conv_id`);
  const visible = visibleTo(m, v.viewerId, sql`s.floor_seq`, conv.of(m.convId));
  if (source === 'words in window') {
    return sql`${columns} from ${messageBodies} ${b} ${messageAt(conv, sql`${b.convId}`, sql`${b.seq}`)}
      where ${b.convId} = ${scoped} and ${b.seq} > ${low} and ${b.seq} < ${high}
        and ${b.searchTerms} @@ s.search_query and ${shown} and ${visible}${andAll(filter)}
      order by ${b.seq} desc limit ${limit}`;
  }
  if (source === 'messages') {
    return sql`${columns} from ${messages} ${m}
      where ${m.convId} = ${scoped} and ${m.seq} > ${low} and ${m.seq} < ${high} and ${shown} and ${visible}${andAll(filter)}
      order by ${m.seq} desc limit ${limit}`;
  }
  const keys =
    source === 'pins'
      ? sql`select ${pn.seq} as seq from ${messagePins} ${pn} where ${pn.convId} = ${scoped} and ${pn.seq} > ${low} and ${pn.seq} < ${high}`
      : source === 'stars'
        ? sql`select ${st.seq} as seq from ${messageStars} ${st}
            where ${st.convId} = ${scoped} and ${st.seq} > ${low} and ${st.seq} < ${high} and ${st.userId} = ${v.viewerId}`
        : source === 'mentions'
          ? // The viewer's mentions and everyone's, through (user_id, conv_id, seq): a message naming both is one candidate.
            sql`select distinct ${mm.seq} as seq from ${messageMentions} ${mm}
              where ${mm.userId} in (${v.viewerId}, '') and ${mm.convId} = ${scoped} and ${mm.seq} > ${low} and ${mm.seq} < ${high}`
          : // The roots of threads, through the thread index; whether the viewer can see a reply is the filter's to say.
            sql`select distinct ${rt.threadRootSeq} as seq from ${messages} ${rt}
              where ${rt.convId} = ${scoped} and ${rt.threadRootSeq} > ${low} and ${rt.threadRootSeq} < ${high}`;
  // The keys sorted and fenced, then one probe of messages each: the probe
  // has nothing to range over, so no plan reads the conversation for it, and
  // the hide is tested on the key before the probe.
  return sql`${columns} from (${keys} order by seq desc offset 0) k
    ${messageAt(conv, sql`s.conv_id`, sql`k.seq`)}
    where not ${hiddenFrom(scoped, v.viewerId, sql`k.seq`)} and ${shown}${andAll(filter)}
    order by k.seq desc limit ${limit}`;
}

/**
 * The words' matches of scope row `s` in `span` (below its window), newest
 * first: the whole GIN lookup, fenced (see the module comment), made only
 * when the span holds a seq. Narrowed, the lookup names the conversation
 * too, so it reads that shard's index alone.
 */
function olderWords(v: Slots<SearchValues>, conv: ConversationOf, span: Span, filter: SQL[]): SQL {
  const { low, high, limit } = span;
  const shard = conv.narrowed ? sql` and ${b.convId} = ${conv.of(b.convId)}` : sql``;
  return sql`select ${m.convId} as conv_id, ${m.seq} as seq, ${m.createdAt} as created_at from (
      select found.conv_id, found.seq from (
        -- Fenced: only the GIN index can answer this, once per conversation.
        select ${b.convId} as conv_id, ${b.seq} as seq from ${messageBodies} ${b}
        -- The span's test names only the outer row: PostgreSQL makes it a
        -- one-time filter, so an empty span skips the lookup.
        where ${b.searchTerms} @@ s.search_query and ${high} - ${low} > 1${shard}
        offset 0) found
      where found.conv_id = s.conv_id and found.seq > ${low} and found.seq < ${high}
      -- Sorted before the visibility checks (fenced again), so they stop once the page is full.
      order by found.seq desc
      offset 0) found
    ${messageAt(conv, sql`found.conv_id`, sql`found.seq`)}
    -- Above the floor already; the hide is tested on the match itself, so
    -- a hidden match costs a probe of the ranges, not of messages too.
    where ${m.revokedAt} is null and ${m.erasedAt} is null and not ${hiddenFrom(conv.of(sql`found.conv_id`), v.viewerId, sql`found.seq`)}${andAll(filter)}
    order by found.seq desc
    limit ${limit}`;
}

/** A place in the search order: creation time, then conversation, then seq. */
interface Position {
  createdAt: SQL;
  convId: SQL;
  seq: SQL;
}

/**
 * The first seq of conversation `convId` at or strictly past `at` in the
 * search order, or null: one probe of (conv_id, created_at, seq). Creation
 * time follows seq within a conversation, so every later seq is past too.
 */
function firstSeqPast(convId: SQL, at: Position, bound: 'at or past' | 'past'): SQL {
  return sql`(select ${e.seq} from ${messages} ${e}
    where ${e.convId} = ${convId} and ${e.createdAt} >= ${at.createdAt}
      and (${e.createdAt}, ${e.convId}, ${e.seq}) ${sql.raw(bound === 'past' ? '>' : '>=')} (${at.createdAt}, ${at.convId}, ${at.seq})
    order by ${e.createdAt}, ${e.seq} limit 1)`;
}

/** The search statement of `shape`; see the module comment. */
function searchStatement(v: Slots<SearchValues>, shape: SearchShape): SQL {
  const source = sourceOf(shape);
  const conv = conversationOf(shape, v);
  const filter = filterConditions(shape, source, v, conv);
  // Creation time follows seq within a conversation, so "after the cursor"
  // is "below one seq" in each: the first message at or past the cursor,
  // found by one probe of (conv_id, created_at, seq). `sentBefore` and
  // `sentAfter` are seqs the same way.
  const afterTime = sql`(timestamptz 'epoch' + ${v.afterMicros}::int8 * interval '1 microsecond')`;
  const stops: SQL[] = [];
  if (shape.paged) {
    const cursor = { createdAt: afterTime, convId: sql`${v.afterConvId}::uuid`, seq: sql`${v.afterSeq}::int8` };
    stops.push(sql`coalesce(${firstSeqPast(conv.of(mb.convId), cursor, 'at or past')}, ${c.maxSeq} + 1)`);
  }
  if (shape.sentBefore) {
    stops.push(sql`coalesce((select ${e.seq} from ${messages} ${e}
          where ${e.convId} = ${conv.of(mb.convId)} and ${e.createdAt} >= ${v.sentBefore}::timestamptz
          order by ${e.createdAt}, ${e.seq} limit 1), ${c.maxSeq} + 1)`);
  }
  const sentAfterSeq = shape.sentAfter
    ? sql`coalesce((select ${e.seq} from ${messages} ${e}
          where ${e.convId} = ${conv.of(mb.convId)} and ${e.createdAt} <= ${v.sentAfter}::timestamptz
          order by ${e.createdAt} desc, ${e.seq} desc limit 1), 0)`
    : sql`0`;
  const stopSeq = stops.length === 0 ? sql`${c.maxSeq} + 1` : stops.length === 1 ? stops[0]! : sql`least(${sql.join(stops, sql`, `)})`;
  const scope = shape.narrowed ? sql`${mb.convId} = ${v.convId}::uuid` : sql`true`;
  // A conversation none of the senders ever wrote in has no hit: one probe
  // of (conv_id, sender_id, client_msg_id) leaves it out before any walk
  // (on the bench, two senders in 10 of the searcher's 100 conversations).
  const sendersWrote = shape.senders
    ? sql` and ${probe(sql`from ${messages} ${e} where ${e.convId} = ${conv.of(mb.convId)} and ${e.senderId} = any(${v.senderIds}::text[])`)}`
    : sql``;
  // The query keyed for each conversation, made once per conversation here:
  // written inside the walks, it was rebuilt (a replace and a tsquery parse)
  // for every body row they test, a third of a search's time on the bench.
  const searchQuery = shape.words ? sql`, ${keyedQuery(v.tsqueryTemplate, searchKeySql(sql`s.conv_id`))} as search_query` : sql``;
  // Scope row s's hits in `span`, newest first: the window's (a walk down
  // the primary key), then, only when that falls short, those below it (the
  // words' GIN lookup). The walks are the arms of a UNION ALL under a limit:
  // PostgreSQL runs an Append's arms in order and stops pulling at the
  // limit, so the second arm runs only for what the first left unfilled.
  const walk = (span: Span, windowSeqs: SQL): SQL => {
    const windowLow = sql`greatest(${span.low}, ${span.high} - 1 - ${windowSeqs})`;
    const inWindow = { low: windowLow, high: span.high, limit: span.limit };
    const belowWindow = { low: span.low, high: sql`${windowLow} + 1`, limit: span.limit };
    const first = candidates(source === 'words' ? 'words in window' : source, v, conv, inWindow, filter);
    const then = source === 'words' ? olderWords(v, conv, belowWindow, filter) : candidates(source, v, conv, belowWindow, filter);
    return sql`select * from ((${first}) union all (${then})) hits limit ${span.limit}`;
  };
  // Each read of the bar is its own scalar subquery (an init plan), so the
  // probe's index condition can use it; joined, the probe scanned the whole
  // conversation's (conv_id, created_at, seq) for it.
  const barPosition = { createdAt: sql`(select created_at from bar)`, convId: sql`(select conv_id from bar)`, seq: sql`(select seq from bar)` };
  // Materialized: inlined into its one reader, the keyed query would be
  // made again for every row the walks test.
  return sql`with scope as materialized (
      select s.*${searchQuery}
      from (
        select f.*, greatest(f.floor_seq, f.after_seq) as low_seq from (
          select ${mb.convId} as conv_id, ${visibleFloor(mb, c, v, conv.of(c.id))} as floor_seq, ${sentAfterSeq} as after_seq, ${stopSeq} as stop_seq
          from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
          where ${mb.userId} = ${v.viewerId} and ${scope}${sendersWrote}
          offset 0) f) s),
    heads as (
      select s.*, h.seq as head_seq, h.created_at as head_created_at
      from scope s cross join lateral (${walk({ low: sql`s.low_seq`, high: sql`s.stop_seq`, limit: sql`1` }, sql.raw(String(RECENT_WINDOW)))}) h),
    bar as (
      select head_created_at as created_at, conv_id, head_seq as seq from heads
      order by head_created_at desc, conv_id desc, head_seq desc
      offset ${v.size} limit 1),
    rest as (
      select h.* from (
        -- Only a conversation whose newest hit is newer than the bar can
        -- place another on the page, and only above the bar: its first
        -- message past the bar, one probe of (conv_id, created_at, seq).
        select s.*, greatest(s.low_seq, coalesce(${firstSeqPast(conv.of(sql`s.conv_id`), barPosition, 'past')} - 1, s.low_seq)) as rest_low
        from heads s
        where not exists (select from bar) or (s.head_created_at, s.conv_id, s.head_seq) > (select created_at, conv_id, seq from bar)
        offset 0) s
      cross join lateral (${walk({ low: sql`s.rest_low`, high: sql`s.head_seq`, limit: sql`${v.size}` }, sql`${v.size}::int8 * ${sql.raw(String(DEEPER_WINDOW_PER_HIT))}`)}) h),
    page as (
      select conv_id, head_seq as seq, head_created_at as created_at from heads
      union all select * from rest
      order by created_at desc, conv_id desc, seq desc
      limit ${v.limit})
    select ${messageColumns(m)}, ${b.text} as text, (extract(epoch from ${m.createdAt}) * 1000000)::int8 as created_micros
    from page p
    ${messageAt(conv, sql`p.conv_id`, sql`p.seq`)}
    ${keyedRowAt(messageBodies, b, conv, sql`p.conv_id`, sql`p.seq`)}
    order by ${m.createdAt} desc, ${m.convId} desc, ${m.seq} desc`;
}

/** The statement of `shape`; narrowed to one conversation, it also says whether the viewer is in it. */
function searchShape(shape: SearchShape): Statement<SearchValues> {
  return statement<SearchValues>((v) => {
    const search = searchStatement(v, shape);
    if (!shape.narrowed) return search;
    // Narrowed to one conversation: say whether the viewer is in it, in the same snapshot.
    return sql`select h.*, (select true from ${members} ${mb} where ${mb.convId} = ${v.convId}::uuid and ${mb.userId} = ${v.viewerId}) as is_member
        from (select 1) one left join lateral (${search}) h on true`;
  });
}

/** The statements by shape, each rendered on its first use (a few thousand shapes at most; a handful in use). */
const searches = new Map<string, Statement<SearchValues>>();

/** The shape of `request`. */
function shapeOf(request: SearchRequest): SearchShape {
  const f: MessageFilter = request.filter;
  return {
    narrowed: request.convId !== null,
    paged: request.after !== null,
    words: request.query !== null,
    senders: f.senderIds !== null,
    sentAfter: f.sentAfter !== null,
    sentBefore: f.sentBefore !== null,
    mentionsMe: f.mentionsMe,
    starred: f.starred,
    pinned: f.pinned,
    hasReplies: f.hasReplies,
  };
}

/** The statement of `shape`, rendered once. */
function statementOf(shape: SearchShape): Statement<SearchValues> {
  const key = JSON.stringify(shape);
  let rendered = searches.get(key);
  if (rendered === undefined) {
    rendered = searchShape(shape);
    searches.set(key, rendered);
  }
  return rendered;
}

/** The values `request` binds into its statement. */
function valuesOf(request: SearchRequest): SearchValues {
  const { after, filter } = request;
  return {
    ...retentionValues(request.retention),
    viewerId: request.viewerId,
    tsqueryTemplate: request.query?.tsqueryTemplate ?? '',
    size: request.size,
    limit: request.size + 1,
    convId: request.convId ?? '',
    afterMicros: after?.createdMicros ?? 0,
    afterConvId: after?.convId ?? '',
    afterSeq: after?.seq ?? 0,
    senderIds: filter.senderIds ?? [],
    sentAfter: filter.sentAfter ?? '',
    sentBefore: filter.sentBefore ?? '',
  };
}

/**
 * A search across every conversation the viewer is in: one statement,
 * which reads the shards of all of them (a multi-shard query on Citus).
 */
async function searchAllConversations(db: SqlRunner, request: SearchRequest): Promise<SearchOutcome> {
  const rows = await db.rows<Partial<HitRow>>(statementOf(shapeOf(request))(valuesOf(request)));
  return hitsOf(rows, request.size);
}

/**
 * A search within one conversation (`request.convId`): one statement,
 * routed to that conversation's shard, which also says whether the viewer
 * is in it. Sent from its own function so the routing check
 * (test/routing/routing.test.ts) holds it to one shard.
 */
async function searchOneConversation(db: SqlRunner, request: SearchRequest): Promise<SearchOutcome> {
  const rows = await db.rows<Partial<HitRow> & { is_member: boolean | null }>(statementOf(shapeOf(request))(valuesOf(request)));
  if (rows[0]?.is_member !== true) return NOT_FOUND;
  return hitsOf(rows, request.size);
}

/** A page of hits from a search statement's rows (a narrowed one's has a row without a hit when nothing matched). */
function hitsOf(rows: readonly Partial<HitRow>[], size: number): SearchOutcome {
  const hits = rows
    .filter((r) => r.seq != null)
    .map((r) => {
      const row = r as HitRow;
      return { message: messageRowOf(row), text: row.text, position: { createdMicros: row.created_micros, convId: row.convId, seq: row.seq } };
    })
    // A lateral join need not keep its rows' order: put them back in search order.
    .sort((a, b) => newestFirst(a.position, b.position));
  return { kind: 'hits', hits: hits.slice(0, size), hasNextPage: hits.length > size };
}

/** The PostgreSQL search backend. */
export const postgresSearch: SearchBackend = {
  name: 'postgresql',
  search: (db, request) => (request.convId === null ? searchAllConversations(db, request) : searchOneConversation(db, request)),
};

/** The search order: creation time, then conversation id, then seq, all descending. */
function newestFirst(a: SearchPosition, b: SearchPosition): number {
  if (a.createdMicros !== b.createdMicros) return b.createdMicros - a.createdMicros;
  if (a.convId !== b.convId) return a.convId < b.convId ? 1 : -1;
  return b.seq - a.seq;
}
