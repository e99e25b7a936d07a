/**
 * The partitioned run (`BACKSCROLL_TEST_LAYOUT=partitioned`): integration
 * files run unchanged on the layout of test/helpers/partitionedLayout.ts,
 * every distinct statement the server sends is recorded with the store
 * function that sent it and the values of its first execution for each
 * number of conversations it was given (a batch of one and a batch of
 * three are told apart), and when the file's database closes each is
 * explained with those values (a custom plan: pruning happens at plan
 * time, as Citus routes), with the partitions its plan reads and the
 * shards the conversations it was given live on, and the partitions its
 * executions wrote are written to a report that
 * test/routing/routing.test.ts checks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { type DistributedTable, distributedTables, PARTITIONS, partitionOf } from './partitionedLayout.ts';

/** Whether this run builds the partitioned layout (PostgreSQL only). */
export const partitionedRun = process.env.BACKSCROLL_TEST_LAYOUT === 'partitioned';

/** One statement text as sent: its first values for each number of conversations bound. */
interface Recorded {
  text: string;
  /** The function of ours that sent it: `store/pages.ts readPage`. */
  caller: string;
  /** Values by the number of distinct conversation ids among them (`conversationIdsIn`). */
  executions: Map<number, readonly unknown[]>;
}

/** Colocation groups: partitions of one number across a group's tables are one shard. */
type Group = DistributedTable['group'];

/** What one statement touched on the partitioned layout. */
export interface RoutedStatement {
  caller: string;
  text: string;
  /** The values it was explained with, shortened, for the report. */
  values: string;
  /** How many distinct conversation ids those values hold (`conversationIdsIn`). */
  conversationsBound: number;
  /** The partition numbers those conversations hash to: the shards a statement on them may touch. */
  boundShards: number[];
  /** The test file whose run sent it first. */
  testFile: string;
  /** Partitions of each distributed table its plan keeps after pruning. */
  reads: Record<string, number[]>;
  /** The most shards (partition numbers) of each group one execution wrote to. */
  mostWritten: Record<Group, number>;
  /** Partitions of each table any execution wrote to. */
  writes: Record<string, number[]>;
  /** Why it could not be explained, if it could not. */
  error?: string;
}

/** Source files by path, read once, for naming the function around a line. */
const sources = new Map<string, string[]>();

/** The name of the top-level function of `file` that contains `line`: the nearest one declared above it. */
function enclosingFunction(file: string, line: number): string | undefined {
  let lines = sources.get(file);
  if (lines === undefined) {
    lines = readFileSync(file, 'utf8').split('\n');
    sources.set(file, lines);
  }
  for (let i = Math.min(line, lines.length) - 1; i >= 0; i--) {
    const match = /^(?:export )?(?:async )?function\*? (\w+)|^(?:export )?const (\w+) = /.exec(lines[i]!);
    if (match) return match[1] ?? match[2];
  }
  return undefined;
}

/**
 * The code of ours outside src/db/ that sent a statement, from the stack at
 * the send: its file and function (`store/pages.ts scanPage`). A
 * transaction's callback is anonymous, and the stack below it is the
 * driver's, so it is named after the function around it in the source.
 * Null: sent by a test itself, not by the server.
 */
function callerOf(stack: string): string | null {
  for (const line of stack.split('\n').slice(1)) {
    const match = /at (?:async )?(?:(\S+) \()?(?:file:\/\/)?(\/[^()]*?\/src\/([^:()]+)):(\d+):\d+\)?$/.exec(line.trim());
    if (match === null || match[2]!.includes('/node_modules/') || match[3]!.startsWith('db/')) continue;
    const name = match[1]?.replace(/^Object\./, '') ?? enclosingFunction(match[2]!, Number(match[4]));
    return `${match[3]} ${name ?? `line ${match[4]}`}`;
  }
  return null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The distinct uuids among a statement's values, arrays included: the
 * conversations it was given, as every conversation id is a uuid. A uuid
 * that names something else (a client message id, a user whose token's
 * `sub` is one) only widens the shards a statement may touch.
 */
function conversationIdsIn(params: readonly unknown[]): string[] {
  const ids = new Set<string>();
  for (const value of params.flatMap((p) => (Array.isArray(p) ? (p as unknown[]) : [p]))) {
    if (typeof value === 'string' && UUID.test(value)) ids.add(value.toLowerCase());
  }
  return [...ids];
}

/**
 * Records each distinct statement text with its caller and its first values
 * for each number of conversations it was given: the same text sent for one
 * conversation and for three is explained both ways, and a text sent a
 * hundred times for one conversation once.
 */
export function statementRecorder(): { record(text: string, params: readonly unknown[]): void; recorded: Map<string, Recorded | null> } {
  const recorded = new Map<string, Recorded | null>();
  return {
    recorded,
    record(text, params) {
      const seen = recorded.get(text);
      if (seen === null) return;
      const bound = conversationIdsIn(params).length;
      if (seen !== undefined) {
        if (!seen.executions.has(bound)) seen.executions.set(bound, [...params]);
        return;
      }
      const caller = callerOf(new Error().stack ?? '');
      // A test's own fixtures and checks are not what the server sends; null marks the text as seen.
      recorded.set(text, caller === null ? null : { text, caller, executions: new Map([[bound, [...params]]]) });
    },
  };
}

interface PlanNode {
  'Relation Name'?: string;
  'Target Tables'?: { 'Relation Name': string }[];
  Plans?: PlanNode[];
}

/** The partitions a plan reads or targets, by table. */
function partitionsIn(plan: PlanNode): Record<string, number[]> {
  const found: Record<string, Set<number>> = {};
  const note = (relation: string | undefined) => {
    const partition = relation === undefined ? null : partitionOf(relation);
    if (partition !== null) (found[partition.table.table] ??= new Set()).add(partition.index);
  };
  const walk = (node: PlanNode) => {
    note(node['Relation Name']);
    node['Target Tables']?.forEach((target) => note(target['Relation Name']));
    node.Plans?.forEach(walk);
  };
  walk(plan);
  return Object.fromEntries(Object.entries(found).map(([table, set]) => [table, [...set].sort((a, b) => a - b)]));
}

/** A value as the report shows it: short, and never a whole text. */
function shortValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** A connection to `url` for `partitionsRead`: plans for the values bound, in UTC. */
export function explainingClient(url: string): postgres.Sql {
  return postgres(url, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: 'force_custom_plan', TimeZone: 'UTC' } });
}

/**
 * The partitions of each distributed table the plan of `text` reads with
 * `params` bound, on a connection of `sql` that plans for the values
 * (`explainingClient`).
 */
export async function partitionsRead(sql: postgres.Sql, text: string, params: readonly unknown[]): Promise<Record<string, number[]>> {
  const [row] = await sql.unsafe(`explain (format json) ${text}`, params as postgres.ParameterOrJSON<never>[]);
  return partitionsIn((row!['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
}

/**
 * Explains every recorded statement on the database at `url` with each of
 * its recorded values, and reads the write log, answering what each
 * touched: one answer per recorded execution.
 */
export async function routeRecorded(url: string, recorded: Iterable<Recorded | null>, testFile: string): Promise<RoutedStatement[]> {
  const sql = explainingClient(url);
  try {
    const executions = await sql<{ query: string; relations: string[] }[]>`
      select query, array_agg(distinct relation) as relations from routing_writes group by query, pid, started_at`;
    const routed: RoutedStatement[] = [];
    for (const statement of recorded) {
      if (statement === null) continue;
      const mostWritten: Record<Group, number> = { conversation: 0, user: 0 };
      const writes: Record<string, Set<number>> = {};
      for (const execution of executions.filter((e) => e.query === statement.text)) {
        const shards: Record<Group, Set<number>> = { conversation: new Set(), user: new Set() };
        for (const relation of execution.relations) {
          const partition = partitionOf(relation)!;
          shards[partition.table.group].add(partition.index);
          (writes[partition.table.table] ??= new Set()).add(partition.index);
        }
        for (const group of ['conversation', 'user'] as const) mostWritten[group] = Math.max(mostWritten[group], shards[group].size);
      }
      for (const params of statement.executions.values()) {
        let reads: Record<string, number[]> = {};
        let error: string | undefined;
        try {
          reads = await partitionsRead(sql, statement.text, params);
        } catch (caught) {
          error = (caught as Error).message;
        }
        const ids = conversationIdsIn(params);
        routed.push({
          caller: statement.caller,
          text: statement.text,
          values: params.map(shortValue).join(', '),
          conversationsBound: ids.length,
          boundShards: await shardsOf(sql, ids),
          testFile,
          reads,
          mostWritten,
          writes: Object.fromEntries(Object.entries(writes).map(([table, set]) => [table, [...set].sort((a, b) => a - b)])),
          ...(error === undefined ? {} : { error }),
        });
      }
    }
    return routed;
  } finally {
    await sql.end();
  }
}

/**
 * The partition numbers conversations `ids` fall in: PostgreSQL's own hash
 * partitioning rule, asked of the conversations table (every table of the
 * group has the same modulus and the same hash of a uuid, so the same
 * number holds the same conversation in each).
 */
export async function shardsOf(sql: postgres.Sql, ids: readonly string[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const conversationTable = distributedTables.find((t) => t.group === 'conversation')!.table;
  const rows = await sql<{ shard: number }[]>`
    select distinct i as shard from unnest(${ids as string[]}::uuid[]) as id, generate_series(0, ${PARTITIONS - 1}::int) as i
    where satisfies_hash_partition(${`public.${conversationTable}`}::regclass, ${PARTITIONS}::int, i, id)
    order by shard`;
  return rows.map((r) => r.shard);
}

/** Writes one file's routed statements into the report folder `BACKSCROLL_ROUTING_REPORT`, if set. */
export function writeRoutingReport(name: string, routed: RoutedStatement[]): void {
  const folder = process.env.BACKSCROLL_ROUTING_REPORT;
  if (folder) writeFileSync(join(folder, `${name}.json`), JSON.stringify(routed));
}
