/**
 * The page statements. Each read of a page is ONE statement: it checks the
 * membership (and reads the clear watermark), scans the index range for one
 * row more than the page, tests the far side of the cursor, and reads
 * `max_seq`, all in one snapshot. Bodies are not read here.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import type { PageWindow } from '../history/pageWindow.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, type RawMessageRow, toMessageRow } from './rows.ts';
import { messageColumns, type RetentionClock, visibleFloor, visibleTo } from './sqlFragments.ts';

/** What every page statement reads about the conversation, in the page's snapshot. */
interface PageSnapshot {
  latestSeq: number;
  /** The change-feed position (`conversations.change_seq`). */
  changeSeq: number;
}

/** A keyset page as scanned: rows in scan order, up to `size + 1`. */
export interface ScannedPage extends PageSnapshot {
  kind: 'page';
  scanned: MessageRow[];
  /** A visible message lies beyond the cursor (seq <= after, or seq >= before). */
  behindExists: boolean;
}

/** A page around an anchor as scanned. */
export interface ScannedAround extends PageSnapshot {
  kind: 'around';
  /** Descending, up to `before + 1`. */
  older: MessageRow[];
  anchor: MessageRow | null;
  /** Ascending, up to `after + 1`. */
  newer: MessageRow[];
}

type PageStatementRow = Partial<RawMessageRow> & { latest_seq: number; change_seq: number; behind_exists: boolean; side?: string };

/** The member row's visible floor (clear watermark and retention), as the scan and the flag see it. */
const FLOOR = sql.raw('mb.floor_seq');

/**
 * The member row (with `max_seq`, the change-feed position, the visible
 * floor and the far-side flag), then a lateral scan of the page. `offset 0`
 * keeps each subquery from being flattened, so the floor and the flag are
 * computed once per request, not once per scanned row. The scan and the
 * flag refer to the member row as `mb`.
 */
function pageStatement(viewerId: string, convId: string, retention: RetentionClock, behind: SQL, scan: SQL): SQL {
  return sql`select mb.latest_seq, mb.change_seq, mb.behind_exists, p.*
    from (select mb.*, ${behind} as behind_exists
          from (select mb.conv_id, c.max_seq as latest_seq, c.change_seq, ${visibleFloor('mb', 'c', retention)} as floor_seq
                from members mb join conversations c on c.id = mb.conv_id
                where mb.conv_id = ${convId} and mb.user_id = ${viewerId}
                offset 0) mb
          offset 0) mb
    left join lateral (${scan}) p on true`;
}

/** Scans one keyset page; `NotFound` when the viewer is not a member (or there is no such conversation). */
export async function scanPage(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  window: PageWindow,
): Promise<ScannedPage | NotFound> {
  const visible = visibleTo('m', viewerId, FLOOR);
  const limit = window.size + 1;
  let range: SQL;
  let order: SQL;
  let behind: SQL;
  if (window.direction === 'forward') {
    range = sql`m.seq > ${window.afterSeq}`;
    order = sql.raw('m.seq asc');
    behind = sql`exists (select 1 from messages n where n.conv_id = mb.conv_id and n.seq <= ${window.afterSeq} and ${visibleTo('n', viewerId, FLOOR)})`;
  } else if (window.beforeSeq !== null) {
    range = sql`m.seq < ${window.beforeSeq}`;
    order = sql.raw('m.seq desc');
    behind = sql`exists (select 1 from messages n where n.conv_id = mb.conv_id and n.seq >= ${window.beforeSeq} and ${visibleTo('n', viewerId, FLOOR)})`;
  } else {
    range = sql.raw('true');
    order = sql.raw('m.seq desc');
    behind = sql.raw('false');
  }
  const scan = sql`select ${messageColumns('m')} from messages m
    where m.conv_id = mb.conv_id and ${range} and ${visible}
    order by ${order} limit ${limit}`;
  const statement = sql`${pageStatement(viewerId, convId, retention, behind, scan)} order by p.seq ${sql.raw(
    window.direction === 'forward' ? 'asc' : 'desc',
  )}`;
  const rows = await db.rows<PageStatementRow>(statement);
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  return {
    kind: 'page',
    latestSeq: first.latest_seq,
    changeSeq: first.change_seq,
    behindExists: first.behind_exists,
    scanned: rows.filter((r) => r.seq != null).map((r) => toMessageRow(r as RawMessageRow)),
  };
}

/** Scans the page around `anchorSeq`; `NotFound` when the viewer is not a member. */
export async function scanAround(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  anchorSeq: number,
  before: number,
  after: number,
): Promise<ScannedAround | NotFound> {
  const side = (name: string, range: SQL, order: string, limit: number) =>
    sql`(select ${name}::text as side, ${messageColumns('m')} from messages m
      where m.conv_id = mb.conv_id and ${range} and ${visibleTo('m', viewerId, FLOOR)}
      order by m.seq ${sql.raw(order)} limit ${limit})`;
  const scan = sql`${side('older', sql`m.seq < ${anchorSeq}`, 'desc', before + 1)}
    union all ${side('anchor', sql`m.seq = ${anchorSeq}`, 'asc', 1)}
    union all ${side('newer', sql`m.seq > ${anchorSeq}`, 'asc', after + 1)}`;
  const rows = await db.rows<PageStatementRow>(pageStatement(viewerId, convId, retention, sql.raw('false'), scan));
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  const of = (name: string) => rows.filter((r) => r.side === name).map((r) => toMessageRow(r as RawMessageRow));
  // union all keeps each branch's rows together but not their order: sort here.
  const older = of('older').sort((a, b) => b.seq - a.seq);
  const newer = of('newer').sort((a, b) => a.seq - b.seq);
  return { kind: 'around', latestSeq: first.latest_seq, changeSeq: first.change_seq, older, anchor: of('anchor')[0] ?? null, newer };
}

/** Where `findFirstVisibleAt` landed. */
export interface FirstVisible {
  kind: 'located';
  /** The first visible message created at or after the time asked for; null when there is none. */
  seq: number | null;
  latestSeq: number;
}

/**
 * The first message the viewer can see created at or after `time` and the
 * conversation's `max_seq`, through the creation-time index; `NotFound` when
 * the viewer is not a member.
 */
export async function findFirstVisibleAt(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  time: string,
): Promise<FirstVisible | NotFound> {
  const scan = sql`select m.seq from messages m
    where m.conv_id = mb.conv_id and m.created_at >= ${time}::timestamptz and ${visibleTo('m', viewerId, FLOOR)}
    order by m.created_at, m.seq limit 1`;
  const rows = await db.rows<{ latest_seq: number; seq: number | null }>(pageStatement(viewerId, convId, retention, sql.raw('false'), scan));
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  return { kind: 'located', seq: first.seq ?? null, latestSeq: first.latest_seq };
}
