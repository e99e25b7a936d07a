/**
 * Plans of a statement as the store runs it: prepared, with a custom plan
 * (planned for its values) or a generic one (planned without them, as
 * PostgreSQL may run a prepared statement after five executions), under
 * `EXPLAIN (ANALYZE, BUFFERS)`. Row counts and the plan's shape are
 * deterministic for given data, so tests assert on them, not on time.
 */
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { SqlRunner } from '../../src/db/runner.ts';

/** One node of a JSON plan, as PostgreSQL writes it (the fields read here). */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** Every node of `plan`, parents first. */
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The rows `relation`'s scans looked at in the whole plan: returned plus filtered out, over all loops. */
export function rowsRead(plan: PlanNode, relation: string): number {
  return nodes(plan)
    .filter((n) => n['Relation Name'] === relation)
    .reduce(
      (sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * n['Actual Loops'],
      0,
    );
}

/** Shared buffers the statement touched (hit or read). */
export function buffersTouched(plan: PlanNode): number {
  return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
}

/** The plan without its figures: node types with their relations and indexes, indented as nested. */
export function planShape(plan: PlanNode): string[] {
  const walk = (node: PlanNode, depth: number): string[] => [
    `${'  '.repeat(depth)}${node['Node Type']}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}`,
    ...(node.Plans ?? []).flatMap((child) => walk(child, depth + 1)),
  ];
  return walk(plan, 0);
}

/** A bound value as an SQL literal, for `EXECUTE`'s arguments. */
function literal(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  throw new Error(`A plan test binds numbers, booleans, strings and null only, got: ${JSON.stringify(value)}`);
}

const dialect = new PgDialect();
let prepared = 0;

/** How a prepared statement is planned: for its values, or without them. */
export type PlanMode = 'custom' | 'generic';

/** Prepares `query`, runs it once under `EXPLAIN (ANALYZE, BUFFERS)` planned as `mode` says, and answers the plan. */
export async function explainPrepared(db: SqlRunner, query: SQL, mode: PlanMode): Promise<PlanNode> {
  const { sql: text, params } = dialect.sqlToQuery(query);
  const name = `plan_test_${prepared++}`;
  return db.transaction(async (tx) => {
    await tx.rows(sql.raw(`set local plan_cache_mode = force_${mode}_plan`));
    await tx.rows(sql.raw(`prepare ${name} as ${text}`));
    const [row] = await tx.rows<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      sql.raw(`explain (analyze, buffers, format json) execute ${name}(${params.map(literal).join(', ')})`),
    );
    await tx.rows(sql.raw(`deallocate ${name}`));
    return row!['QUERY PLAN'][0].Plan;
  });
}

/** The statements `work` sends through the runner it is given (a runner over `db`), in order. */
export async function recordStatements(db: SqlRunner, work: (runner: SqlRunner) => Promise<unknown>): Promise<SQL[]> {
  const sent: SQL[] = [];
  await work({
    rows: (query) => {
      sent.push(query);
      return db.rows(query);
    },
    transaction: () => {
      throw new Error('recordStatements records single statements; run transactions on a plain runner.');
    },
  });
  return sent;
}

/**
 * The one statement `work` sends, recorded in a transaction that is then
 * rolled back (a statement that writes leaves nothing behind), explained
 * (and so run once) planned as `mode` says.
 */
export async function explainRecorded(db: SqlRunner, work: (runner: SqlRunner) => Promise<unknown>, mode: PlanMode): Promise<PlanNode> {
  let statement: SQL | undefined;
  const rolledBack = new Error('rolled back');
  await db
    .transaction(async (tx) => {
      [statement] = await recordStatements(tx, work);
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  return explainPrepared(db, statement!, mode);
}
