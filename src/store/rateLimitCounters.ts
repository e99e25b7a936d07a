/**
 * The shared rate-limit counters (`rate_limits`): one prepared upsert per
 * check. rate-limiter-flexible's Drizzle store builds the same upsert with
 * drizzle's query builder on every call and sends it unprepared, so
 * PostgreSQL parsed and planned it before every send (0.4 ms of its 0.7 ms
 * there, and the builder's walk in Node); the library keeps the rest (the
 * fixed windows, the insurance limiter when PostgreSQL cannot answer).
 */
import { sql } from 'drizzle-orm';
import { rateLimits as r } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { statement } from './statement.ts';

/** A counter after the upsert: points used in the window, and when the window ends (null: never). */
export interface RateLimitCounter {
  points: number;
  expire: Date | null;
}

/** Times as ISO 8601 text: the driver binds no Date into a prepared statement's untyped parameter. */
interface AddValues {
  key: string;
  points: number;
  /** The end of a window that starts now. */
  expire: string | null;
  now: string;
}

// The end as epoch milliseconds: the driver answers timestamptz as text.
const columns = sql`${r.points} as points, (extract(epoch from ${r.expire}) * 1000)::float8 as expire_ms`;
/** Bare column names, where PostgreSQL wants them unqualified (the insert's list, the conflict target, the left of `set`). */
const [key, points, expire] = [r.key, r.points, r.expire].map((column) => sql.identifier(column.name));

/** Adds points to the window, or starts a new window when it ended (as the library's upsert does). */
const addToWindow = statement<AddValues>(
  (v) => sql`insert into ${r} (${key}, ${points}, ${expire}) values (${v.key}, ${v.points}, ${v.expire}::timestamptz)
    on conflict (${key}) do update set
      ${points} = case when ${r.expire} <= ${v.now}::timestamptz then ${v.points}::int else ${r.points} + ${v.points}::int end,
      ${expire} = case when ${r.expire} <= ${v.now}::timestamptz then ${v.expire}::timestamptz else ${r.expire} end
    returning ${columns}`,
);

/** Sets the counter outright: the library's `forceExpire` (penalties, blocks). */
const setWindow = statement<Omit<AddValues, 'now'>>(
  (v) => sql`insert into ${r} (${key}, ${points}, ${expire}) values (${v.key}, ${v.points}, ${v.expire}::timestamptz)
    on conflict (${key}) do update set ${points} = ${v.points}::int, ${expire} = ${v.expire}::timestamptz
    returning ${columns}`,
);

/** Adds `points` to `key`'s counter, or sets it with `force`; answers the counter as it now is. */
export async function upsertRateLimitCounter(
  db: SqlRunner,
  key: string,
  points: number,
  expire: Date | null,
  force: boolean,
): Promise<RateLimitCounter> {
  const end = expire?.toISOString() ?? null;
  const [row] = await db.rows<{ points: number; expire_ms: number | null }>(force ? setWindow({ key, points, expire: end }) : addToWindow({ key, points, expire: end, now: new Date().toISOString() }));
  return { points: row!.points, expire: row!.expire_ms === null ? null : new Date(row!.expire_ms) };
}
