/**
 * The page statements. Each read of a page is ONE statement: it checks the
 * membership (and reads the clear watermark), walks what the viewer can see
 * for one row more than the page, tests the far side of the cursor, reads
 * `max_seq`, and joins the warm bodies of the rows it found (and, for a
 * page that asks for `readCount`, counts their receipts: pageReceipts.ts),
 * all in one snapshot. Bodies not found there (archived or erased) are the body
 * loader's. Scans and
 * far-side tests are `visibleRun` walks, so what the viewer hid, cleared or
 * lost to retention costs a page a few seeks, not a row each.
 */
import { type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { archiveSegments, conversations, members, messageBodies, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { PageWindow } from '../history/pageWindow.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { withReadCounts } from './pageReceipts.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import { messageColumns, type RetentionClock, type RetentionValues, retentionValues, visibleFloor, visibleRun, visibleTo } from './sqlFragments.ts';
import { type Slots, statement } from './statement.ts';

/** What every page statement reads about the conversation, in the page's snapshot. */
interface PageSnapshot {
  latestSeq: number;
  /** The change-feed position (`conversations.change_seq`). */
  changeSeq: number;
  /** The highest seq whose body may be in the archive (0: none is): rows above it are warm. */
  archivedThroughSeq: number;
  /** The warm body of each scanned row that has one, by seq. */
  warmTexts: Map<number, string>;
  /** Each scanned row's read count, by seq, when the scan was asked for them (`receipts`); else empty. */
  readCounts: Map<number, number>;
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

/** A row of a page statement: the snapshot, and a scanned message unless the page is empty. */
type PageStatementRow = Partial<MessageRow> & {
  latest_seq: number;
  change_seq: number;
  archived_through: number;
  behind_exists: boolean;
  side?: string;
  body_text: string | null;
  /** Present when the statement counted receipts (pageReceipts.ts). */
  readers?: number | null;
};

/** What every page statement binds: who reads which conversation, when. */
interface PageValues extends RetentionValues {
  viewerId: string;
  convId: string;
}

const m = alias(messages, 'm');
const e = alias(messages, 'e');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const a = alias(archiveSegments, 'a');
const b = alias(messageBodies, 'b');

/** The member row's visible floor (clear watermark and retention), as the scan and the flag see it. */
const FLOOR = sql.raw('mb.floor_seq');
/** What a walk answers is aliased as `m`, so `messageColumns(m)` reads it. */
const WALKED = sql.identifier('m');

/**
 * The member row (with `max_seq`, the change-feed position, the end of the
 * conversation's archive, the visible floor and the far-side flag), then a
 * lateral scan of the page. Segments are disjoint and numbered by their
 * first seq, so the last one's `to_seq` is where the archive ends: one
 * index probe, and pages of warm messages know they need no segment. `offset 0`
 * keeps each subquery from being flattened, so the floor and the flag are
 * computed once per request, not once per scanned row. The scan and the
 * flag refer to the member row as `mb`. Every conversation-scoped table is
 * read by the bound conversation id, never by a column of another row, so
 * a Citus deployment routes the statement to one shard (a correlated
 * `conv_id` cannot be pruned: test/routing/routing.test.ts).
 * `with-bodies` reads each scanned row's warm body (the scan must answer
 * `messageColumns`), so a page of warm messages is one statement with its
 * texts; `seqs-only` is for scans that answer seqs alone.
 */
function pageStatement(v: Slots<PageValues>, behind: SQL, scan: SQL, bodies: 'with-bodies' | 'seqs-only' = 'with-bodies'): SQL {
  // A scalar subquery, not a join: one primary-key probe per scanned row
  // whatever the statistics say (a join's plan changed once the tables were
  // analyzed, and could hash the conversation's bodies).
  const body =
    bodies === 'with-bodies' ? sql`(select ${b.text} from ${messageBodies} ${b} where ${b.convId} = ${v.convId} and ${b.seq} = p.seq)` : sql`null::text`;
  return sql`select mb.latest_seq, mb.change_seq, mb.archived_through, mb.behind_exists, p.*, ${body} as body_text
    from (select mb.*, ${behind} as behind_exists
          from (select ${mb.convId}, ${c.maxSeq} as latest_seq, ${c.changeSeq} as change_seq, ${visibleFloor(mb, c, v, v.convId)} as floor_seq,
                       coalesce((select ${a.toSeq} from ${archiveSegments} ${a} where ${a.convId} = ${v.convId}
                                 order by ${a.fromSeq} desc limit 1), 0) as archived_through
                from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
                where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}
                offset 0) mb
          offset 0) mb
    left join lateral (${scan}) p on true`;
}

/** What every page statement's rows say about the conversation and the scanned rows' bodies and receipts. */
function snapshotOf(rows: readonly PageStatementRow[], first: PageStatementRow): PageSnapshot {
  const warmTexts = new Map<number, string>();
  const readCounts = new Map<number, number>();
  for (const row of rows) {
    if (row.seq == null) continue;
    if (row.body_text !== null) warmTexts.set(row.seq, row.body_text);
    if (row.readers != null) readCounts.set(row.seq, row.readers);
  }
  return {
    latestSeq: first.latest_seq,
    changeSeq: first.change_seq,
    archivedThroughSeq: Number(first.archived_through),
    warmTexts,
    readCounts,
  };
}

/** The viewer's walk from `start` in `order` over the member row's conversation, up to `limit` messages. */
function walk(v: Slots<PageValues>, start: Placeholder | SQL, order: 'asc' | 'desc', limit: Placeholder | SQL): SQL {
  return sql`(${visibleRun({ convId: v.convId, viewerId: v.viewerId, floor: FLOOR, start, order, limit })}) ${WALKED}`;
}

/** What a keyset page binds besides `PageValues`. */
interface KeysetValues extends PageValues {
  /** `after` going forward, `before` going backward; unused for the newest page. */
  cursorSeq: number;
  /** The page size plus one. */
  limit: number;
}

/**
 * A keyset page statement walking in `order` from its cursor (none: from
 * the newest). The far side of a cursor is a walk of one message the other
 * way from it: seq <= after going forward, seq >= before going backward.
 */
function keysetStatement(order: 'asc' | 'desc', cursor: boolean, receipts: boolean) {
  return statement<KeysetValues>((v) => {
    const start = cursor ? v.cursorSeq : sql`mb.latest_seq + 1`;
    const scan = sql`select ${messageColumns(m)} from ${walk(v, start, order, v.limit)}`;
    const behind = !cursor
      ? sql`false`
      : order === 'asc'
        ? sql`exists (select from ${walk(v, sql`${v.cursorSeq}::int8 + 1`, 'desc', sql`1`)})`
        : sql`exists (select from ${walk(v, sql`${v.cursorSeq}::int8 - 1`, 'asc', sql`1`)})`;
    const page = pageStatement(v, behind, scan);
    return receipts ? withReadCounts(page, v.convId, order) : sql`${page} order by p.seq ${sql.raw(order)}`;
  });
}

/** The keyset page statements, by whether they count receipts (a page asking for `readCount`). */
const keysetPages = (receipts: boolean) => ({
  forward: keysetStatement('asc', true, receipts),
  backward: keysetStatement('desc', true, receipts),
  newest: keysetStatement('desc', false, receipts),
});
const plainPages = keysetPages(false);
const pagesWithReceipts = keysetPages(true);

/**
 * Scans one keyset page, with each row's read count when `receipts`;
 * `NotFound` when the viewer is not a member (or there is no such conversation).
 */
export async function scanPage(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  window: PageWindow,
  receipts = false,
): Promise<ScannedPage | NotFound> {
  const values = { ...retentionValues(retention), viewerId, convId, limit: window.size + 1 };
  const pages = receipts ? pagesWithReceipts : plainPages;
  const query =
    window.direction === 'forward'
      ? pages.forward({ ...values, cursorSeq: window.afterSeq })
      : window.beforeSeq !== null
        ? pages.backward({ ...values, cursorSeq: window.beforeSeq })
        : pages.newest({ ...values, cursorSeq: 0 });
  const rows = await db.rows<PageStatementRow>(query);
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  return {
    kind: 'page',
    ...snapshotOf(rows, first),
    behindExists: first.behind_exists,
    scanned: rows.filter((r) => r.seq != null).map((r) => messageRowOf(r as MessageRow)),
  };
}

/** What a page around an anchor binds besides `PageValues`. */
interface AroundValues extends PageValues {
  anchorSeq: number;
  /** How many older and newer rows to scan: one more than the page shows on each side. */
  olderLimit: number;
  newerLimit: number;
}

/** The statement of a page around an anchor, counting receipts when `receipts`. */
const aroundStatement = (receipts: boolean) => statement<AroundValues>((v) => {
  const side = (name: string, from: SQL) => sql`(select ${name}::text as side, ${messageColumns(m)} from ${from})`;
  const scan = sql`${side('older', walk(v, v.anchorSeq, 'desc', v.olderLimit))}
    union all ${side('anchor', sql`${messages} ${m} where ${m.convId} = ${v.convId} and ${m.seq} = ${v.anchorSeq} and ${visibleTo(m, v.viewerId, FLOOR, v.convId)}`)}
    union all ${side('newer', walk(v, v.anchorSeq, 'asc', v.newerLimit))}`;
  const page = pageStatement(v, sql`false`, scan);
  return receipts ? withReadCounts(page, v.convId, null) : page;
});
const plainAround = aroundStatement(false);
const aroundWithReceipts = aroundStatement(true);

/**
 * Scans the page around `anchorSeq`, with each row's read count when
 * `receipts`; `NotFound` when the viewer is not a member.
 */
export async function scanAround(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  anchorSeq: number,
  before: number,
  after: number,
  receipts = false,
): Promise<ScannedAround | NotFound> {
  const rows = await db.rows<PageStatementRow>(
    (receipts ? aroundWithReceipts : plainAround)({
      ...retentionValues(retention),
      viewerId,
      convId,
      anchorSeq,
      olderLimit: before + 1,
      newerLimit: after + 1,
    }),
  );
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  const of = (name: string) => rows.filter((r) => r.side === name).map((r) => messageRowOf(r as MessageRow));
  // union all keeps each branch's rows together but not their order: sort here.
  const older = of('older').sort((a, b) => b.seq - a.seq);
  const newer = of('newer').sort((a, b) => a.seq - b.seq);
  return {
    kind: 'around',
    ...snapshotOf(rows, first),
    older, anchor: of('anchor')[0] ?? null, newer };
}

/** Where `findFirstVisibleAt` landed. */
export interface FirstVisible {
  kind: 'located';
  /** The first visible message created at or after the time asked for; null when there is none. */
  seq: number | null;
  latestSeq: number;
}

// Creation time follows seq within a conversation (sends stamp messages no
// earlier than the newest), so the first visible message created at or
// after `time` is the first visible one from the first message created then.
const firstVisibleAt = statement<PageValues & { time: string }>((v) =>
  pageStatement(
    v,
    sql`false`,
    sql`select ${m.seq} from (select ${e.seq} from ${messages} ${e}
        where ${e.convId} = ${v.convId} and ${e.createdAt} >= ${v.time}::timestamptz
        order by ${e.createdAt}, ${e.seq} limit 1) earliest
      cross join lateral ${walk(v, sql`earliest.seq - 1`, 'asc', sql`1`)}`,
    'seqs-only',
  ),
);

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
  const rows = await db.rows<{ latest_seq: number; seq: number | null }>(firstVisibleAt({ ...retentionValues(retention), viewerId, convId, time }));
  const first = rows[0];
  if (first === undefined) return NOT_FOUND;
  return { kind: 'located', seq: first.seq ?? null, latestSeq: first.latest_seq };
}
