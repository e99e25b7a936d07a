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
import { type NearbyHidesAt, type NearbySummary, nearbyHides, nearbyScan, shortcutAnswered, type SideFound } from './nearbyHides.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { withReadCounts } from './pageReceipts.ts';
import { type MessageRow, messageRowIn } from './rows.ts';
import { MESSAGE_COLUMN_NAMES_IN_CONVERSATION, messageColumnsInConversation, type RetentionClock, type RetentionValues, retentionValues, visibleFloor, visibleRun, visibleTo } from './sqlFragments.ts';
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

/** A scanned message as a page statement answers it: its conversation is the one bound (`messageColumnsInConversation`). */
type ScannedRow = Omit<MessageRow, 'convId'>;

/** A row of a page statement: its header row (the snapshot), or a scanned message. */
type PageStatementRow = Partial<ScannedRow> & {
  /** The snapshot: on the header row (`seq` null), null on the scanned rows. */
  latest_seq: number | null;
  change_seq: number | null;
  archived_through: number | null;
  behind_exists: boolean | null;
  side?: string;
  body_text: string | null;
  /** Present when the statement counted receipts (pageReceipts.ts). */
  readers?: number | null;
  /** Present when the statement took the shortcut past nearby hides (nearbyHides.ts). */
  low_bound?: number | null;
  high_bound?: number | null;
  hidden_len?: number;
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
/** What a walk answers is aliased as `m`, so `messageColumnsInConversation(m)` reads it. */
const WALKED = sql.identifier('m');

/** A page statement's scan: its rows, and the names of its columns. */
interface PageScan {
  rows: SQL;
  columns: readonly string[];
}

/** What every page statement says once, on its header row. */
const SNAPSHOT_COLUMNS = ['latest_seq', 'change_seq', 'archived_through', 'behind_exists'];
/** What the shortcut's statements add to it (nearbyHides.ts). */
const NEARBY_COLUMNS = ['low_bound', 'high_bound', 'hidden_len'];

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
 * `seq`), so a page of warm messages is one statement with its
 * texts; `seqs-only` is for scans that answer seqs alone.
 *
 * The snapshot is said once, on a header row of its own (its scan columns
 * null, `seq` among them), and is null on the scanned rows: repeated on
 * every row, its seven columns were a third of what postgres.js spent
 * reading a page of 50 (about 100 µs of the server's CPU). A member's
 * statement answers the header row even when the page is empty; a
 * non-member's answers no row.
 */
function pageStatement(
  v: Slots<PageValues>,
  behind: SQL,
  scan: PageScan,
  bodies: 'with-bodies' | 'seqs-only' = 'with-bodies',
  nearby?: Nearby,
): SQL {
  // A scalar subquery, not a join: one primary-key probe per scanned row
  // whatever the statistics say (a join's plan changed once the tables were
  // analyzed, and could hash the conversation's bodies).
  const body =
    bodies === 'with-bodies' ? sql`(select ${b.text} from ${messageBodies} ${b} where ${b.convId} = ${v.convId} and ${b.seq} = p.seq)` : sql`null::text`;
  // The shortcut's ranges (nearbyHides.ts) join the member row as `nh`, so
  // the far-side flag reads them there and the scan as `mb`'s columns.
  const hides = nearby === undefined ? sql`` : sql`cross join lateral (${nearbyHides({ convId: v.convId, viewerId: v.viewerId, floor: FLOOR, ...nearby })}) nh`;
  const said = nearby === undefined ? SNAPSHOT_COLUMNS : [...SNAPSHOT_COLUMNS, ...NEARBY_COLUMNS];
  const header = sql.join(
    said.map((name) => sql`case when p.seq is null then mb.${sql.identifier(name)} end as ${sql.identifier(name)}`),
    sql`, `,
  );
  const headerRow = sql.join(
    scan.columns.map((name) => sql`null as ${sql.identifier(name)}`),
    sql`, `,
  );
  return sql`select ${header}, p.*, ${body} as body_text
    from (select mb.*, ${nearby === undefined ? sql`` : sql`nh.*, `}${behind} as behind_exists
          from (select ${mb.convId}, ${c.maxSeq} as latest_seq, ${c.changeSeq} as change_seq, ${visibleFloor(mb, c, v, v.convId)} as floor_seq,
                       coalesce((select ${a.toSeq} from ${archiveSegments} ${a} where ${a.convId} = ${v.convId}
                                 order by ${a.fromSeq} desc limit 1), 0) as archived_through
                from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
                where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}
                offset 0) mb ${hides}
          offset 0) mb
    cross join lateral ((select ${headerRow}) union all (${scan.rows})) p`;
}

/** What every page statement's rows say about the conversation and the scanned rows' bodies and receipts. */
function snapshotOf(rows: readonly PageStatementRow[], header: PageHeader): PageSnapshot {
  const warmTexts = new Map<number, string>();
  const readCounts = new Map<number, number>();
  for (const row of rows) {
    if (row.seq == null) continue;
    if (row.body_text !== null) warmTexts.set(row.seq, row.body_text);
    if (row.readers != null) readCounts.set(row.seq, row.readers);
  }
  return {
    latestSeq: header.latest_seq,
    changeSeq: header.change_seq,
    archivedThroughSeq: Number(header.archived_through),
    warmTexts,
    readCounts,
  };
}

/** A page statement's header row: the one without a scanned message, which carries the snapshot. */
type PageHeader = PageStatementRow & { latest_seq: number; change_seq: number; archived_through: number; behind_exists: boolean };

/** The header row of a page statement's rows; undefined when there is none (the viewer is not a member). */
function headerOf(rows: readonly PageStatementRow[]): PageHeader | undefined {
  return rows.find((row) => row.seq == null) as PageHeader | undefined;
}

/** The viewer's walk from `start` in `order` over the member row's conversation, up to `limit` messages. */
function walk(v: Slots<PageValues>, start: Placeholder | SQL, order: 'asc' | 'desc', limit: Placeholder | SQL): SQL {
  return sql`(${visibleRun({ convId: v.convId, viewerId: v.viewerId, floor: FLOOR, start, order, limit })}) ${WALKED}`;
}

/** Where the shortcut fetches its ranges (nearbyHides.ts): around `pivot`, skipping at most `cap` seqs. */
type Nearby = Pick<NearbyHidesAt, 'pivot' | 'cap'>;

/** How a page statement finds what the viewer can see: the walk, or the shortcut past nearby hides. */
type Route = 'walk' | 'shortcut';

/**
 * The viewer's visible messages from `start` in `order`, up to `limit`, by
 * `route`; `hides` names the shortcut's ranges where it is taken (`mb` for
 * the scan, `nh` for a far-side flag beside them).
 */
function visibleFrom(v: Slots<PageValues>, route: Route, hides: string, start: Placeholder | SQL, order: 'asc' | 'desc', limit: Placeholder | SQL, cap: Placeholder | SQL): SQL {
  if (route === 'walk') return walk(v, start, order, limit);
  return sql`(${nearbyScan({ convId: v.convId, floor: FLOOR, start, order, limit, cap, hides: sql.raw(hides) })}) ${WALKED}`;
}

/** What a keyset page binds besides `PageValues`. */
interface KeysetValues extends PageValues {
  /** `after` going forward, `before` going backward; unused for the newest page. */
  cursorSeq: number;
  /** The page size plus one. */
  limit: number;
}

/**
 * A keyset page statement reading in `order` from its cursor (none: from
 * the newest) by `route`. The far side of a cursor is one visible message
 * the other way from it: seq <= after going forward, seq >= before going
 * backward. The shortcut's ranges lie around the cursor, the first seq of
 * the upper side being its pivot, and it may skip as many hidden seqs as
 * the page reads rows.
 */
function keysetStatement(order: 'asc' | 'desc', cursor: boolean, receipts: boolean, route: Route) {
  return statement<KeysetValues>((v) => {
    const start = cursor ? v.cursorSeq : sql`mb.latest_seq + 1`;
    const upperFrom = order === 'desc' ? start : sql`${v.cursorSeq}::int8 + 1`;
    const nearby = route === 'shortcut' ? { pivot: sql`greatest(${upperFrom}, ${FLOOR} + 1)`, cap: v.limit } : undefined;
    const scan = { rows: sql`select ${messageColumnsInConversation(m)} from ${visibleFrom(v, route, 'mb', start, order, v.limit, v.limit)}`, columns: MESSAGE_COLUMN_NAMES_IN_CONVERSATION };
    const behind = !cursor
      ? sql`false`
      : order === 'asc'
        ? sql`exists (select from ${visibleFrom(v, route, 'nh', sql`${v.cursorSeq}::int8 + 1`, 'desc', sql`1`, v.limit)})`
        : sql`exists (select from ${visibleFrom(v, route, 'nh', sql`${v.cursorSeq}::int8 - 1`, 'asc', sql`1`, v.limit)})`;
    const page = pageStatement(v, behind, scan, 'with-bodies', nearby);
    // Unordered: keysetPageOf puts the scanned rows in the scan's order. A
    // sort here held every row until the last was read, and cost PostgreSQL
    // about 20 µs of a newest page's ~300 (README, Performance: the sixteenth session).
    return receipts ? withReadCounts(page, v.convId, null) : page;
  });
}

/** The keyset page statements of one route, by whether they count receipts (a page asking for `readCount`). */
const keysetPages = (receipts: boolean, route: Route) => ({
  forward: keysetStatement('asc', true, receipts, route),
  backward: keysetStatement('desc', true, receipts, route),
  newest: keysetStatement('desc', false, receipts, route),
});
const keysetRoutes = {
  plain: { shortcut: keysetPages(false, 'shortcut'), walk: keysetPages(false, 'walk') },
  receipts: { shortcut: keysetPages(true, 'shortcut'), walk: keysetPages(true, 'walk') },
};

/** What the shortcut's statement said about the viewer's nearby ranges. */
function nearbySummaryOf(header: PageHeader): NearbySummary {
  return { lowBound: header.low_bound ?? null, highBound: header.high_bound ?? null, hiddenLen: header.hidden_len ?? 0 };
}

/** A keyset page statement's rows in `convId` as a scanned page; `NotFound` when it answered none (no membership). */
function keysetPageOf(convId: string, order: 'asc' | 'desc', rows: readonly PageStatementRow[]): ScannedPage | NotFound {
  const header = headerOf(rows);
  if (header === undefined) return NOT_FOUND;
  const scanned = rows.filter((r) => r.seq != null).map((r) => messageRowIn(convId, r as ScannedRow));
  // Usually in the scan's order already (then sorting is one pass), but the statement does not promise it.
  scanned.sort(order === 'asc' ? (x, y) => x.seq - y.seq : (x, y) => y.seq - x.seq);
  return {
    kind: 'page',
    ...snapshotOf(rows, header),
    behindExists: header.behind_exists,
    scanned,
  };
}

/**
 * Scans one keyset page, with each row's read count when `receipts`;
 * `NotFound` when the viewer is not a member (or there is no such
 * conversation). The shortcut first; the walk when it could not answer.
 */
export async function scanPage(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  window: PageWindow,
  receipts = false,
): Promise<ScannedPage | NotFound> {
  const limit = window.size + 1;
  const values = { ...retentionValues(retention), viewerId, convId, limit };
  const routes = receipts ? keysetRoutes.receipts : keysetRoutes.plain;
  const read = (pages: typeof routes.walk) =>
    window.direction === 'forward'
      ? pages.forward({ ...values, cursorSeq: window.afterSeq })
      : window.beforeSeq !== null
        ? pages.backward({ ...values, cursorSeq: window.beforeSeq })
        : pages.newest({ ...values, cursorSeq: 0 });
  const order = window.direction === 'forward' ? 'asc' : 'desc';
  const shortcutRows = await db.rows<PageStatementRow>(read(routes.shortcut));
  const page = keysetPageOf(convId, order, shortcutRows);
  if (page.kind !== 'page') return page;
  const scanned: SideFound = { found: page.scanned.length, limit };
  const behind: SideFound = { found: page.behindExists ? 1 : 0, limit: window.direction === 'backward' && window.beforeSeq === null ? 0 : 1 };
  const sides = window.direction === 'forward' ? { up: scanned, down: behind } : { down: scanned, up: behind };
  if (shortcutAnswered(nearbySummaryOf(headerOf(shortcutRows)!), limit, sides)) return page;
  return keysetPageOf(convId, order, await db.rows<PageStatementRow>(read(routes.walk)));
}

/** What a page around an anchor binds besides `PageValues`. */
interface AroundValues extends PageValues {
  anchorSeq: number;
  /** How many older and newer rows to scan: one more than the page shows on each side. */
  olderLimit: number;
  newerLimit: number;
  /** Both limits together: the most hidden seqs the shortcut may skip. */
  cap: number;
}

/** The statement of a page around an anchor by `route`, counting receipts when `receipts`. */
const aroundStatement = (receipts: boolean, route: Route) => statement<AroundValues>((v) => {
  const side = (name: string, from: SQL) => sql`(select ${name}::text as side, ${messageColumnsInConversation(m)} from ${from})`;
  const rows = sql`${side('older', visibleFrom(v, route, 'mb', v.anchorSeq, 'desc', v.olderLimit, v.cap))}
    union all ${side('anchor', sql`${messages} ${m} where ${m.convId} = ${v.convId} and ${m.seq} = ${v.anchorSeq} and ${visibleTo(m, v.viewerId, FLOOR, v.convId)}`)}
    union all ${side('newer', visibleFrom(v, route, 'mb', v.anchorSeq, 'asc', v.newerLimit, v.cap))}`;
  const scan = { rows, columns: ['side', ...MESSAGE_COLUMN_NAMES_IN_CONVERSATION] };
  const nearby = route === 'shortcut' ? { pivot: sql`greatest(${v.anchorSeq}::int8, ${FLOOR} + 1)`, cap: v.cap } : undefined;
  const page = pageStatement(v, sql`false`, scan, 'with-bodies', nearby);
  return receipts ? withReadCounts(page, v.convId, null) : page;
});
const aroundRoutes = {
  plain: { shortcut: aroundStatement(false, 'shortcut'), walk: aroundStatement(false, 'walk') },
  receipts: { shortcut: aroundStatement(true, 'shortcut'), walk: aroundStatement(true, 'walk') },
};

/** A page-around statement's rows in `convId` as a scanned page; `NotFound` when it answered none (no membership). */
function aroundPageOf(convId: string, rows: readonly PageStatementRow[]): ScannedAround | NotFound {
  const header = headerOf(rows);
  if (header === undefined) return NOT_FOUND;
  const of = (name: string) => rows.filter((r) => r.side === name).map((r) => messageRowIn(convId, r as ScannedRow));
  // union all keeps each branch's rows together but not their order: sort here.
  const older = of('older').sort((a, b) => b.seq - a.seq);
  const newer = of('newer').sort((a, b) => a.seq - b.seq);
  return {
    kind: 'around',
    ...snapshotOf(rows, header),
    older, anchor: of('anchor')[0] ?? null, newer };
}

/**
 * Scans the page around `anchorSeq`, with each row's read count when
 * `receipts`; `NotFound` when the viewer is not a member. The shortcut
 * first; the walk when it could not answer.
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
  const olderLimit = before + 1;
  const newerLimit = after + 1;
  const values = { ...retentionValues(retention), viewerId, convId, anchorSeq, olderLimit, newerLimit, cap: olderLimit + newerLimit };
  const routes = receipts ? aroundRoutes.receipts : aroundRoutes.plain;
  const shortcutRows = await db.rows<PageStatementRow>(routes.shortcut(values));
  const page = aroundPageOf(convId, shortcutRows);
  if (page.kind !== 'around') return page;
  const sides = { down: { found: page.older.length, limit: olderLimit }, up: { found: page.newer.length, limit: newerLimit } };
  if (shortcutAnswered(nearbySummaryOf(headerOf(shortcutRows)!), values.cap, sides)) return page;
  return aroundPageOf(convId, await db.rows<PageStatementRow>(routes.walk(values)));
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
    {
      rows: sql`select ${m.seq} from (select ${e.seq} from ${messages} ${e}
          where ${e.convId} = ${v.convId} and ${e.createdAt} >= ${v.time}::timestamptz
          order by ${e.createdAt}, ${e.seq} limit 1) earliest
        cross join lateral ${walk(v, sql`earliest.seq - 1`, 'asc', sql`1`)}`,
      columns: ['seq'],
    },
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
  const rows = await db.rows<PageStatementRow>(firstVisibleAt({ ...retentionValues(retention), viewerId, convId, time }));
  const header = headerOf(rows);
  if (header === undefined) return NOT_FOUND;
  return { kind: 'located', seq: rows.find((row) => row.seq != null)?.seq ?? null, latestSeq: header.latest_seq };
}
