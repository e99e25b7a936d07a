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
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { SearchPosition } from '../history/searchCursor.ts';
import { QUERY_KEY_MARK, SEARCH_KEY_BYTES } from '../history/searchText.ts';
import { type RawMessageRow, toMessageRow } from '../store/rows.ts';
import { messageColumns, visibleFloor, visibleTo } from '../store/sqlFragments.ts';
import type { SearchBackend, SearchOutcome, SearchRequest } from './backend.ts';

type HitRow = RawMessageRow & { text: string; created_micros: number };

/**
 * How many seqs below the stop each conversation's first look covers. On the
 * benchmark data (words in up to a third of messages, 100 conversations) 32
 * answered in 5-9 ms where 64 took 8-17 and 128 16-27: most pages fill from
 * the newest few matches of each conversation.
 */
export const RECENT_WINDOW = 32;

/** `conversationSearchKey` in SQL, of the uuid column `column`. */
export function searchKeySql(column: string): SQL {
  return sql.raw(`encode(substring(decode(md5(${column}::text), 'hex') from 1 for ${SEARCH_KEY_BYTES}), 'base64')`);
}

/** The query as a `tsquery` for the conversation whose search key is the column `key`. */
function keyedQuery(template: string, key: string): SQL {
  return sql`replace(${template}::text, ${QUERY_KEY_MARK}::text, chr(39) || ${sql.raw(key)})::tsquery`;
}

/** The cursor's creation time, and its position as a row value comparable with `(created_at, conv_id, seq)`. */
function afterPosition(request: SearchRequest): { time: SQL; position: SQL } | null {
  const after = request.after;
  if (after === null) return null;
  const time = sql`(timestamptz 'epoch' + ${after.createdMicros}::int8 * interval '1 microsecond')`;
  return { time, position: sql`(${time}, ${after.convId}::uuid, ${after.seq}::int8)` };
}

/** The search statement; see the module comment. */
function searchStatement(request: SearchRequest): SQL {
  const { viewerId, retention, size } = request;
  const limit = size + 1;
  const after = afterPosition(request);
  // Creation time follows seq within a conversation, so "after the cursor"
  // is "below one seq" in each: the first message at or past the cursor,
  // found by one probe of (conv_id, created_at, seq).
  const stopSeq =
    after === null
      ? sql.raw('c.max_seq + 1')
      : sql`coalesce((select e.seq from messages e
          where e.conv_id = mb.conv_id and e.created_at >= ${after.time} and (e.created_at, e.conv_id, e.seq) >= ${after.position}
          order by e.created_at, e.seq limit 1), c.max_seq + 1)`;
  const narrowed = request.convId === null ? sql.raw('true') : sql`mb.conv_id = ${request.convId}::uuid`;
  const matches = keyedQuery(request.query.tsqueryTemplate, 's.search_key');
  // What the viewer may see of a found message `m` of scope row `s`.
  const visible = sql`m.revoked_at is null and m.erased_at is null and ${visibleTo('m', viewerId, sql.raw('s.floor_seq'))}`;
  return sql`with scope as (
      select s.*, greatest(s.floor_seq, s.stop_seq - ${RECENT_WINDOW + 1}::int8) as window_low, ${searchKeySql('s.conv_id')} as search_key
      from (
        select mb.conv_id, ${visibleFloor('mb', 'c', retention)} as floor_seq, ${stopSeq} as stop_seq
        from members mb join conversations c on c.id = mb.conv_id
        where mb.user_id = ${viewerId} and ${narrowed}
        offset 0) s),
    recent as (
      select h.* from scope s cross join lateral (
        select m.conv_id, m.seq, m.created_at
        from message_bodies b join messages m on m.conv_id = b.conv_id and m.seq = b.seq
        where b.conv_id = s.conv_id and b.seq > s.window_low and b.seq < s.stop_seq and b.search_terms @@ ${matches}
          and ${visible}
        order by b.seq desc
        limit ${limit}) h),
    bar as (
      select created_at, conv_id, seq from recent
      order by created_at desc, conv_id desc, seq desc
      offset ${size} limit 1),
    older as (
      select h.* from scope s cross join lateral (
        select m.conv_id, m.seq, m.created_at from (
          select found.conv_id, found.seq from (
            -- Fenced: only the GIN index can answer this, once per conversation.
            select b.conv_id, b.seq from message_bodies b where b.search_terms @@ ${matches}
            offset 0) found
          where found.conv_id = s.conv_id and found.seq > s.floor_seq and found.seq <= s.window_low
          -- Sorted before the visibility checks (fenced again), so they stop once the page is full.
          order by found.seq desc
          offset 0) found
        join messages m on m.conv_id = found.conv_id and m.seq = found.seq
        where ${visible}
        order by found.seq desc
        limit ${limit}) h
      where s.window_low > s.floor_seq
        and (not exists (select from bar)
          -- The window's first message bounds everything below it.
          or coalesce((select (e.created_at, e.conv_id, e.seq) > (select created_at, conv_id, seq from bar)
            from messages e where e.conv_id = s.conv_id and e.seq > s.window_low
            order by e.seq limit 1), true))),
    page as (
      select * from recent union all select * from older
      order by created_at desc, conv_id desc, seq desc
      limit ${limit})
    select ${messageColumns('m')}, b.text, (extract(epoch from m.created_at) * 1000000)::int8 as created_micros
    from page p
    join messages m on m.conv_id = p.conv_id and m.seq = p.seq
    join message_bodies b on b.conv_id = p.conv_id and b.seq = p.seq
    order by m.created_at desc, m.conv_id desc, m.seq desc`;
}

/** The PostgreSQL search backend. */
export const postgresSearch: SearchBackend = {
  name: 'postgresql',
  async search(db: SqlRunner, request: SearchRequest): Promise<SearchOutcome> {
    let statement = searchStatement(request);
    if (request.convId !== null) {
      // Narrowed to one conversation: say whether the viewer is in it, in the same snapshot.
      statement = sql`select h.*, (select true from members mb where mb.conv_id = ${request.convId}::uuid and mb.user_id = ${request.viewerId}) as is_member
        from (select 1) one left join lateral (${statement}) h on true`;
    }
    const rows = await db.rows<Partial<HitRow> & { is_member?: boolean | null }>(statement);
    if (request.convId !== null && rows[0]?.is_member !== true) return { kind: 'not-member' };
    const hits = rows
      .filter((r) => r.seq != null)
      .map((r) => {
        const row = r as HitRow;
        return { message: toMessageRow(row), text: row.text, position: { createdMicros: row.created_micros, convId: row.conv_id, seq: row.seq } };
      })
      // A lateral join need not keep its rows' order: put them back in search order.
      .sort((a, b) => newestFirst(a.position, b.position));
    return { kind: 'hits', hits: hits.slice(0, request.size), hasNextPage: hits.length > request.size };
  },
};

/** The search order: creation time, then conversation id, then seq, all descending. */
export function newestFirst(a: SearchPosition, b: SearchPosition): number {
  if (a.createdMicros !== b.createdMicros) return b.createdMicros - a.createdMicros;
  if (a.convId !== b.convId) return a.convId < b.convId ? 1 : -1;
  return b.seq - a.seq;
}
