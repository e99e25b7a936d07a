/**
 * The shared rate-limit counters (`rate_limits`): prepared upserts.
 * rate-limiter-flexible's Drizzle store builds its upsert with drizzle's
 * query builder on every call and sends it unprepared, so PostgreSQL parsed
 * and planned it before every send (0.4 ms of its 0.7 ms there, and the
 * builder's walk in Node); the library keeps the rest (the fixed windows,
 * the insurance limiter when PostgreSQL cannot answer). Adds are one
 * statement for any number of checks (`addRateLimitCounters`), so a
 * process can answer the checks that arrive together with one round trip
 * (store/rateLimitBatcher.ts).
 */
import { sql } from 'drizzle-orm';
import { rateLimits as r } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { answerEachAdd, mergeRateLimitAdds, type RateLimitAdd, type RateLimitCounter } from '../history/rateLimitAdds.ts';
import { statement } from './statement.ts';

export type { RateLimitCounter } from '../history/rateLimitAdds.ts';

/**
 * Times as ISO 8601 text: the driver binds no Date into a prepared
 * statement's untyped parameter, nor an array as `timestamptz[]` (drizzle
 * makes that type's serializer pass values through), so the ends go as
 * `text[]`.
 */
interface AddValues {
  /** One per key, in key order (`mergeRateLimitAdds`). */
  keys: string[];
  points: number[];
  /** The end of a window that starts now, per key. */
  expires: (string | null)[];
  now: string;
}

// The end as epoch milliseconds: the driver answers timestamptz as text.
const columns = sql`${r.points} as points, (extract(epoch from ${r.expire}) * 1000)::float8 as expire_ms`;
/** Bare column names, where PostgreSQL wants them unqualified (the insert's list, the conflict target, the left of `set`). */
const [key, points, expire] = [r.key, r.points, r.expire].map((column) => sql.identifier(column.name));

/** Adds points to each key's window, or starts a new window where it ended (as the library's upsert does). */
const addToWindows = statement<AddValues>(
  (v) => sql`insert into ${r} (${key}, ${points}, ${expire})
    select * from unnest(${v.keys}::text[], ${v.points}::int4[], ${v.expires}::text[]::timestamptz[])
    on conflict (${key}) do update set
      ${points} = case when ${r.expire} <= ${v.now}::timestamptz then excluded.${points} else ${r.points} + excluded.${points} end,
      ${expire} = case when ${r.expire} <= ${v.now}::timestamptz then excluded.${expire} else ${r.expire} end
    returning ${r.key} as key, ${columns}`,
);

/** Sets the counter outright: the library's `forceExpire` (penalties, blocks). */
const setWindow = statement<{ key: string; points: number; expire: string | null }>(
  (v) => sql`insert into ${r} (${key}, ${points}, ${expire}) values (${v.key}, ${v.points}, ${v.expire}::timestamptz)
    on conflict (${key}) do update set ${points} = ${v.points}::int, ${expire} = ${v.expire}::timestamptz
    returning ${columns}`,
);

type CounterRow = { points: number; expire_ms: number | null };
const counterOf = (row: CounterRow): RateLimitCounter => ({ points: row.points, expire: row.expire_ms === null ? null : new Date(row.expire_ms) });

/**
 * Makes each of `adds` in one statement, as if one after another in the
 * order given (a key may come more than once); answers each add's counter
 * as that add left it.
 */
export async function addRateLimitCounters(db: SqlRunner, adds: readonly RateLimitAdd[]): Promise<RateLimitCounter[]> {
  const merged = mergeRateLimitAdds(adds);
  const rows = await db.rows<CounterRow & { key: string }>(
    addToWindows({
      keys: merged.map((add) => add.key),
      points: merged.map((add) => add.points),
      expires: merged.map((add) => add.expire?.toISOString() ?? null),
      now: new Date().toISOString(),
    }),
  );
  return answerEachAdd(adds, new Map(rows.map((row) => [row.key, counterOf(row)])));
}

/** Adds `points` to `key`'s counter, or sets it with `force`; answers the counter as it now is. */
export async function upsertRateLimitCounter(
  db: SqlRunner,
  key: string,
  points: number,
  expire: Date | null,
  force: boolean,
): Promise<RateLimitCounter> {
  if (!force) return (await addRateLimitCounters(db, [{ key, points, expire }]))[0]!;
  const [row] = await db.rows<CounterRow>(setWindow({ key, points, expire: expire?.toISOString() ?? null }));
  return counterOf(row!);
}
