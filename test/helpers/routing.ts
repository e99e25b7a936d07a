/**
 * The partitioned run (`BACKSCROLL_TEST_LAYOUT=partitioned`): integration
 * files run unchanged on the layout of test/helpers/partitionedLayout.ts,
 * every distinct statement the server sends is recorded with the values of
 * its first execution and the store function that sent it, and when the
 * file's database closes each is explained with those values (a custom
 * plan: pruning happens at plan time, as Citus routes) and the partitions
 * its plan reads, and those each of its executions wrote, are written to a
 * report that test/routing/routing.test.ts checks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { type DistributedTable, partitionOf } from './partitionedLayout.ts';

/** Whether this run builds the partitioned layout (PostgreSQL only). */
export const partitionedRun = process.env.BACKSCROLL_TEST_LAYOUT === 'partitioned';

/** One statement text as first sent. */
interface Recorded {
  text: string;
  params: readonly unknown[];
  /** The function of ours that sent it: `store/pages.ts readPage`. */
  caller: string;
}

/** Colocation groups: partitions of one number across a group's tables are one shard. */
type Group = DistributedTable['group'];

/** What one statement touched on the partitioned layout. */
export interface RoutedStatement {
  caller: string;
  text: string;
  /** The values it was explained with, shortened, for the report. */
  values: string;
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

/** Records each distinct statement text with its first values and caller. */
export function statementRecorder(): { record(text: string, params: readonly unknown[]): void; recorded: Map<string, Recorded | null> } {
  const recorded = new Map<string, Recorded | null>();
  return {
    recorded,
    record(text, params) {
      if (recorded.has(text)) return;
      const caller = callerOf(new Error().stack ?? '');
      // A test's own fixtures and checks are not what the server sends; null marks the text as seen.
      recorded.set(text, caller === null ? null : { text, params: [...params], caller });
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

/**
 * Explains every recorded statement on the database at `url` with its
 * recorded values, and reads the write log, answering what each touched.
 */
export async function routeRecorded(url: string, recorded: Iterable<Recorded | null>, testFile: string): Promise<RoutedStatement[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: 'force_custom_plan', TimeZone: 'UTC' } });
  try {
    const executions = await sql<{ query: string; relations: string[] }[]>`
      select query, array_agg(distinct relation) as relations from routing_writes group by query, pid, started_at`;
    const routed: RoutedStatement[] = [];
    for (const statement of recorded) {
      if (statement === null) continue;
      let reads: Record<string, number[]> = {};
      let error: string | undefined;
      try {
        const [row] = await sql.unsafe(`explain (format json) ${statement.text}`, statement.params as postgres.ParameterOrJSON<never>[]);
        reads = partitionsIn((row!['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
      } catch (caught) {
        error = (caught as Error).message;
      }
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
      routed.push({
        caller: statement.caller,
        text: statement.text,
        values: statement.params.map(shortValue).join(', '),
        testFile,
        reads,
        mostWritten,
        writes: Object.fromEntries(Object.entries(writes).map(([table, set]) => [table, [...set].sort((a, b) => a - b)])),
        ...(error === undefined ? {} : { error }),
      });
    }
    return routed;
  } finally {
    await sql.end();
  }
}

/** Writes one file's routed statements into the report folder `BACKSCROLL_ROUTING_REPORT`, if set. */
export function writeRoutingReport(name: string, routed: RoutedStatement[]): void {
  const folder = process.env.BACKSCROLL_ROUTING_REPORT;
  if (folder) writeFileSync(join(folder, `${name}.json`), JSON.stringify(routed));
}
