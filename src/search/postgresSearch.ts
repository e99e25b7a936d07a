/**
 * Search on PostgreSQL (and PGlite): the vectors live on `message_bodies`
 * (`search_terms`, one GIN index), written by the send statement, every
 * lexeme behind its conversation's key (see `conversationSearchKey`), and a
 * search is ONE statement whose permission filter comes before its limit:
 *
 * 1. `scope`: the viewer's member rows (all of them, or the one conversation
 *    asked for), each with its visible floor (clear watermark, since-joined
 *    floor, retention cut-off), the seq the cursor stops at in it, and the
 *    bottom of its recent window (the RECENT_WINDOW seqs below the stop).
 * 2. `recent`: per conversation, the matches in its recent window that the
 *    viewer may see (above the floor, not deleted for them, not revoked or
 *    erased), newest first, up to `size + 1`. The window is a range of the
 *    body primary key, which PostgreSQL ANDs with the GIN lookup, so only
 *    the window's matching rows are read: a common word costs about what a
 *    rare one does.
 * 3. `bar`: the (size + 1)-th newest recent match. A conversation whose
 *    window starts below it cannot place an older match on this page.
 * 4. `older`: only for the other conversations (a rare word left the page
 *    short, or an active conversation's window is newer than the bar), the
 *    same search below the window, with the whole GIN lookup.
 * 5. Both, newest first across conversations, cut at `size + 1`; only then
 *    are the texts read, for the snippets.
 *
 * Steps 3-4 rely on creation time following seq within a conversation
 * (sends stamp `created_at` no earlier than the previous message), so
 * everything below a window is older than the window's first message.
 *
 * Revokes, purges, erasures and the retention purge delete body rows, so
 * their index entries go in the same statement; clears, hides, membership
 * and retention not yet purged are the filter of steps 1-4, evaluated at the
 * request's instant. Nothing about the viewer's conversations comes from the
 * client.
 */
import { type AnyColumn, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { SearchPosition } from '../history/searchCursor.ts';
import { QUERY_KEY_MARK, SEARCH_KEY_BYTES } from '../history/searchText.ts';
import { type MessageRow, messageRowOf } from '../store/rows.ts';
import { hiddenFrom, messageColumns, type RetentionValues, retentionValues, visibleFloor, visibleTo } from '../store/sqlFragments.ts';
import { type Slots, statement } from '../store/statement.ts';
import { NOT_FOUND } from '../store/outcome.ts';
import type { SearchBackend, SearchOutcome, SearchRequest } from './backend.ts';

type HitRow = MessageRow & { text: string; created_micros: number };

/**
 * How many seqs below the stop each conversation's first look covers. On the
 * benchmark data (words in up to a third of messages, 100 conversations) 32
 * answered in 5-9 ms where 64 took 8-17 and 128 16-27: most pages fill from
 * the newest few matches of each conversation.
 */
export const RECENT_WINDOW = 32;

/** `conversationSearchKey` in SQL, of the uuid `column`. */
export function searchKeySql(column: AnyColumn | SQL): SQL {
  return sql`encode(substring(decode(md5(${column}::text), 'hex') from 1 for ${sql.raw(String(SEARCH_KEY_BYTES))}), 'base64')`;
}

/** The query as a `tsquery` for the conversation whose search key is `key`. */
function keyedQuery(template: Placeholder, key: SQL): SQL {
  return sql`replace(${template}::text, ${QUERY_KEY_MARK}::text, chr(39) || ${key})::tsquery`;
}

/** What a search statement binds. */
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
}

const m = alias(messages, 'm');
const e = alias(messages, 'e');
const b = alias(messageBodies, 'b');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');

/** The search statement; see the module comment. `narrowed`: one conversation; `paged`: after a cursor. */
function searchStatement(v: Slots<SearchValues>, narrowed: boolean, paged: boolean): SQL {
  // Creation time follows seq within a conversation, so "after the cursor"
  // is "below one seq" in each: the first message at or past the cursor,
  // found by one probe of (conv_id, created_at, seq).
  const afterTime = sql`(timestamptz 'epoch' + ${v.afterMicros}::int8 * interval '1 microsecond')`;
  const stopSeq = paged
    ? sql`coalesce((select ${e.seq} from ${messages} ${e}
          where ${e.convId} = ${mb.convId} and ${e.createdAt} >= ${afterTime}
            and (${e.createdAt}, ${e.convId}, ${e.seq}) >= (${afterTime}, ${v.afterConvId}::uuid, ${v.afterSeq}::int8)
          order by ${e.createdAt}, ${e.seq} limit 1), ${c.maxSeq} + 1)`
    : sql`${c.maxSeq} + 1`;
  const scope = narrowed ? sql`${mb.convId} = ${v.convId}::uuid` : sql`true`;
  const matches = keyedQuery(v.tsqueryTemplate, sql`s.search_key`);
  // What the viewer may see of a found message `m` of scope row `s`.
  const visible = sql`${m.revokedAt} is null and ${m.erasedAt} is null and ${visibleTo(m, v.viewerId, sql`s.floor_seq`)}`;
  return sql`with scope as (
      select s.*, greatest(s.floor_seq, s.stop_seq - ${RECENT_WINDOW + 1}::int8) as window_low, ${searchKeySql(sql`s.conv_id`)} as search_key
      from (
        select ${mb.convId} as conv_id, ${visibleFloor(mb, c, v)} as floor_seq, ${stopSeq} as stop_seq
        from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
        where ${mb.userId} = ${v.viewerId} and ${scope}
        offset 0) s),
    recent as (
      select h.* from scope s cross join lateral (
        select ${m.convId} as conv_id, ${m.seq} as seq, ${m.createdAt} as created_at
        from ${messageBodies} ${b} join ${messages} ${m} on ${m.convId} = ${b.convId} and ${m.seq} = ${b.seq}
        where ${b.convId} = s.conv_id and ${b.seq} > s.window_low and ${b.seq} < s.stop_seq and ${b.searchTerms} @@ ${matches}
          and ${visible}
        order by ${b.seq} desc
        limit ${v.limit}) h),
    bar as (
      select created_at, conv_id, seq from recent
      order by created_at desc, conv_id desc, seq desc
      offset ${v.size} limit 1),
    older as (
      select h.* from scope s cross join lateral (
        select ${m.convId} as conv_id, ${m.seq} as seq, ${m.createdAt} as created_at from (
          select found.conv_id, found.seq from (
            -- Fenced: only the GIN index can answer this, once per conversation.
            select ${b.convId} as conv_id, ${b.seq} as seq from ${messageBodies} ${b} where ${b.searchTerms} @@ ${matches}
            offset 0) found
          where found.conv_id = s.conv_id and found.seq > s.floor_seq and found.seq <= s.window_low
          -- Sorted before the visibility checks (fenced again), so they stop once the page is full.
          order by found.seq desc
          offset 0) found
        join ${messages} ${m} on ${m.convId} = found.conv_id and ${m.seq} = found.seq
        -- Above the floor already; the hide is tested on the match itself, so
        -- a hidden match costs a probe of the ranges, not of messages too.
        where ${m.revokedAt} is null and ${m.erasedAt} is null and not ${hiddenFrom(sql`found.conv_id`, v.viewerId, sql`found.seq`)}
        order by found.seq desc
        limit ${v.limit}) h
      where s.window_low > s.floor_seq
        and (not exists (select from bar)
          -- The window's first message bounds everything below it.
          or coalesce((select (${e.createdAt}, ${e.convId}, ${e.seq}) > (select created_at, conv_id, seq from bar)
            from ${messages} ${e} where ${e.convId} = s.conv_id and ${e.seq} > s.window_low
            order by ${e.seq} limit 1), true))),
    page as (
      select * from recent union all select * from older
      order by created_at desc, conv_id desc, seq desc
      limit ${v.limit})
    select ${messageColumns(m)}, ${b.text} as text, (extract(epoch from ${m.createdAt}) * 1000000)::int8 as created_micros
    from page p
    join ${messages} ${m} on ${m.convId} = p.conv_id and ${m.seq} = p.seq
    join ${messageBodies} ${b} on ${b.convId} = p.conv_id and ${b.seq} = p.seq
    order by ${m.createdAt} desc, ${m.convId} desc, ${m.seq} desc`;
}

/** A search of every conversation the viewer is in (`narrowed` false), or of one, saying whether the viewer is in it. */
function searchShape(narrowed: boolean, paged: boolean) {
  return statement<SearchValues>((v) => {
    const search = searchStatement(v, narrowed, paged);
    if (!narrowed) return search;
    // Narrowed to one conversation: say whether the viewer is in it, in the same snapshot.
    return sql`select h.*, (select true from ${members} ${mb} where ${mb.convId} = ${v.convId}::uuid and ${mb.userId} = ${v.viewerId}) as is_member
        from (select 1) one left join lateral (${search}) h on true`;
  });
}

const searches = {
  everywhere: { first: searchShape(false, false), after: searchShape(false, true) },
  narrowed: { first: searchShape(true, false), after: searchShape(true, true) },
};

/** The PostgreSQL search backend. */
export const postgresSearch: SearchBackend = {
  name: 'postgresql',
  async search(db: SqlRunner, request: SearchRequest): Promise<SearchOutcome> {
    const shapes = request.convId === null ? searches.everywhere : searches.narrowed;
    const after = request.after;
    const statement = after === null ? shapes.first : shapes.after;
    const rows = await db.rows<Partial<HitRow> & { is_member?: boolean | null }>(
      statement({
        ...retentionValues(request.retention),
        viewerId: request.viewerId,
        tsqueryTemplate: request.query.tsqueryTemplate,
        size: request.size,
        limit: request.size + 1,
        convId: request.convId ?? '',
        afterMicros: after?.createdMicros ?? 0,
        afterConvId: after?.convId ?? '',
        afterSeq: after?.seq ?? 0,
      }),
    );
    if (request.convId !== null && rows[0]?.is_member !== true) return NOT_FOUND;
    const hits = rows
      .filter((r) => r.seq != null)
      .map((r) => {
        const row = r as HitRow;
        return { message: messageRowOf(row), text: row.text, position: { createdMicros: row.created_micros, convId: row.convId, seq: row.seq } };
      })
      // A lateral join need not keep its rows' order: put them back in search order.
      .sort((a, b) => newestFirst(a.position, b.position));
    return { kind: 'hits', hits: hits.slice(0, request.size), hasNextPage: hits.length > request.size };
  },
};

/** The search order: creation time, then conversation id, then seq, all descending. */
function newestFirst(a: SearchPosition, b: SearchPosition): number {
  if (a.createdMicros !== b.createdMicros) return b.createdMicros - a.createdMicros;
  if (a.convId !== b.convId) return a.convId < b.convId ? 1 : -1;
  return b.seq - a.seq;
}
