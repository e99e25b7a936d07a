/**
 * A page's shortcut past what its viewer hid nearby. The walk
 * (`visibleRun`, sqlFragments.ts) is exact whatever a viewer hid, but its
 * plan alone (a recursive union, its seeks, counts and probes) cost about
 * 100 µs of PostgreSQL's CPU a page even where the viewer hid nothing near
 * it: most of a page statement's cost over raw SQL's. Most viewers hide
 * little, so a page first takes the shortcut: the viewer's few hidden ranges
 * nearest the page's cursor (`NEARBY_RANGES` on each side), spelled out as
 * an array of seqs when they hold no more seqs than the page may read twice
 * (`cap`), and one index range scan from the cursor that skips those seqs.
 * The scan reads at most its limit plus `cap` rows, and no plan here waits
 * for statistics either.
 *
 * Past the farthest range it fetched on a side, another range may hide
 * messages, so the scan stops there (`lowBound`, `highBound`). The
 * shortcut has answered when its ranges were few and short enough and each
 * side either filled its limit or met no such bound (`shortcutAnswered`);
 * otherwise the page is read again by the walk. Both read one snapshot's
 * worth of the same rule, so the answer is the walk's either way
 * (test/integration/nearbyHides.test.ts checks them against each other).
 */
import { type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { messageHideRanges, messages } from '../db/schema.ts';
import type { Operand } from './sqlFragments.ts';

/** How many of the viewer's hidden ranges the shortcut fetches on each side of the cursor. */
export const NEARBY_RANGES = 8;

const h = alias(messageHideRanges, 'hr');
const x = alias(messages, 'nx');

/** What locates the ranges: whose, in which conversation, above which floor, around which seq. */
export interface NearbyHidesAt {
  convId: Placeholder;
  viewerId: Placeholder;
  /** The member's visible floor: hidden seqs at or below it do not count. */
  floor: SQL;
  /** Seqs below it are the lower side, seqs from it on the upper side. */
  pivot: SQL;
  /** The most hidden seqs the shortcut may skip; past it the walk reads the page. */
  cap: Placeholder | SQL;
}

/**
 * One row: `low_bound` and `high_bound` (exclusive; null where the side's
 * ranges ran out before `NEARBY_RANGES`, so nothing lies beyond), `hidden_len`
 * (the fetched ranges' seqs, or more when they reach past the cap) and
 * `hidden` (those seqs as an array; empty when over the cap). A lateral
 * subquery for a page statement's member row.
 */
export function nearbyHides(at: NearbyHidesAt): SQL {
  const side = (below: boolean) => sql`(select ${sql.raw(below ? 'true' : 'false')} as below, ${h.fromSeq} as from_seq, ${h.toSeq} as to_seq
      from ${messageHideRanges} ${h}
      where ${h.convId} = ${at.convId} and ${h.userId} = ${at.viewerId} and ${h.fromSeq} ${sql.raw(below ? '<' : '>=')} ${at.pivot}
      order by ${h.fromSeq} ${sql.raw(below ? 'desc' : 'asc')} limit ${sql.raw(String(NEARBY_RANGES))})`;
  // Ranges are counted and spelled out from above the floor (below it
  // nothing is visible anyway), and spelled out only under the cap: a viewer
  // who hid 19,900 in one range costs this subquery one row, not 19,900.
  // Ranges are not filtered by the floor: a filter on `to_seq` would scan
  // every range below it for the few above.
  return sql`select r.low_bound, r.high_bound, r.hidden_len,
      case when r.hidden_len <= ${at.cap} then array(select generate_series(u.f, u.t) from unnest(r.fs, r.ts) u(f, t)) else '{}'::int8[] end as hidden
    from (select
        case when count(*) filter (where n.below) >= ${sql.raw(String(NEARBY_RANGES))} then min(n.from_seq) filter (where n.below) - 1 end as low_bound,
        case when count(*) filter (where not n.below) >= ${sql.raw(String(NEARBY_RANGES))} then max(n.to_seq) filter (where not n.below) + 1 end as high_bound,
        coalesce(sum(greatest(n.to_seq - n.from_seq + 1, 0)), 0)::int8 as hidden_len,
        array_agg(n.from_seq) as fs, array_agg(n.to_seq) as ts
      from (select n.below, greatest(n.from_seq, ${at.floor} + 1) as from_seq, n.to_seq from (${side(true)} union all ${side(false)}) n) n) r`;
}

/** Where a shortcut scan goes; `hides` names the row `nearbyHides` answered. */
export interface NearbyScan {
  convId: Placeholder;
  floor: SQL;
  /** Exclusive: `desc` scans down from below it, `asc` up from above it. */
  start: Operand;
  order: 'asc' | 'desc';
  limit: Operand;
  cap: Placeholder | SQL;
  /** The relation carrying `low_bound`, `high_bound`, `hidden_len` and `hidden`. */
  hides: SQL;
}

/**
 * The visible messages nearest past `start` in `order`, up to `limit`,
 * as far as the shortcut can tell (nothing when over the cap): a subquery
 * with the columns of `messages`, in `order`.
 */
export function nearbyScan(scan: NearbyScan): SQL {
  const { hides: n } = scan;
  const bound =
    scan.order === 'desc'
      ? sql`${x.seq} < ${scan.start} and ${x.seq} > greatest(${scan.floor}, coalesce(${n}.low_bound, 0))`
      : sql`${x.seq} > greatest(${scan.start}, ${scan.floor}) and ${x.seq} < coalesce(${n}.high_bound, 9223372036854775807)`;
  return sql`select ${sql.identifier('nx')}.* from ${messages} ${x}
    where ${x.convId} = ${scan.convId} and ${bound} and ${x.seq} <> all(${n}.hidden) and ${n}.hidden_len <= ${scan.cap}
    order by ${x.seq} ${sql.raw(scan.order)} limit ${scan.limit}`;
}

/** What the shortcut's statement read about the viewer's nearby ranges. */
export interface NearbySummary {
  lowBound: number | null;
  highBound: number | null;
  hiddenLen: number;
}

/** What one side of a shortcut found: the rows it answered and the most it was asked for. */
export interface SideFound {
  found: number;
  limit: number;
}

/**
 * Whether the shortcut answered exactly what the walk would: its ranges
 * were within `cap`, and each side scanned (`down` below the cursor, `up`
 * above it) filled its limit or met no bound before running out.
 */
export function shortcutAnswered(summary: NearbySummary, cap: number, sides: { down?: SideFound; up?: SideFound }): boolean {
  if (summary.hiddenLen > cap) return false;
  const { down, up } = sides;
  if (down && down.found < down.limit && summary.lowBound !== null) return false;
  if (up && up.found < up.limit && summary.highBound !== null) return false;
  return true;
}
