/**
 * Search on PostgreSQL (and PGlite): the vectors live on `message_bodies`
 * (`search_terms`, one GIN index), written by the send statement, and a
 * search is ONE statement whose permission filter comes before its limit:
 *
 * 1. the viewer's member rows (all of them, or the one conversation asked
 *    for), each with its visible floor (clear watermark, since-joined floor,
 *    retention cut-off) and the seq the cursor stops at in it;
 * 2. per conversation, the GIN index finds the bodies that match (the
 *    query ANDed with the conversation's scope lexeme, so the index answers
 *    for that conversation alone), newest first, skipping what the viewer
 *    may not see (below the floor, deleted for them, revoked, erased), up to
 *    `size + 1`;
 * 3. those candidates, newest first across conversations, cut at
 *    `size + 1`; only then are the texts read, for the snippets.
 *
 * Revokes, purges, erasures and the retention purge delete body rows, so
 * their index entries go in the same statement; clears, hides, membership
 * and retention not yet purged are the filter of step 1 and 2, evaluated at
 * the request's instant. Nothing about the viewer's conversations comes from
 * the client.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { SearchPosition } from '../history/searchCursor.ts';
import { type RawMessageRow, toMessageRow } from '../store/rows.ts';
import { messageColumns, visibleFloor, visibleTo } from '../store/sqlFragments.ts';
import type { SearchBackend, SearchOutcome, SearchRequest } from './backend.ts';

type HitRow = RawMessageRow & { text: string; created_micros: number };

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
  const after = afterPosition(request);
  const position = after?.position ?? null;
  // Creation time follows seq within a conversation, so "after the cursor"
  // is "below one seq" in each: the first message at or past the cursor,
  // found by one probe of (conv_id, created_at, seq).
  const stopSeq =
    after === null
      ? sql.raw('9223372036854775807::int8')
      : sql`coalesce((select e.seq from messages e
          where e.conv_id = mb.conv_id and e.created_at >= ${after.time} and (e.created_at, e.conv_id, e.seq) >= ${after.position}
          order by e.created_at, e.seq limit 1), 9223372036854775807::int8)`;
  const scope = request.convId === null ? sql.raw('true') : sql`mb.conv_id = ${request.convId}::uuid`;
  return sql`select ${messageColumns('m')}, b.text, (extract(epoch from m.created_at) * 1000000)::int8 as created_micros
    from (
      select m.* from (
        select mb.conv_id, ${visibleFloor('mb', 'c', retention)} as floor_seq, ${stopSeq} as stop_seq
        from members mb join conversations c on c.id = mb.conv_id
        where mb.user_id = ${viewerId} and ${scope}
        offset 0) mb
      cross join lateral (
        select m.* from (
          select found.conv_id, found.seq from (
            -- Fenced: only the GIN index can answer this, once per conversation.
            select b.conv_id, b.seq from message_bodies b
            where b.search_terms @@ (${request.query.tsquery}::tsquery && quote_literal('#' || mb.conv_id::text)::tsquery)
            offset 0) found
          where found.conv_id = mb.conv_id and found.seq > mb.floor_seq and found.seq < mb.stop_seq
          -- Sorted before the visibility checks (fenced again), so they stop once the page is full.
          order by found.seq desc
          offset 0) found
        join messages m on m.conv_id = found.conv_id and m.seq = found.seq
        where m.revoked_at is null and m.erased_at is null
          and ${visibleTo('m', viewerId, sql.raw('mb.floor_seq'))}
        order by found.seq desc
        limit ${size + 1}) m
      ${position === null ? sql.raw('') : sql`where (m.created_at, m.conv_id, m.seq) < ${position}`}
      order by m.created_at desc, m.conv_id desc, m.seq desc
      limit ${size + 1}) m
    join message_bodies b on b.conv_id = m.conv_id and b.seq = m.seq
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
