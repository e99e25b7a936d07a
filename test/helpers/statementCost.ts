/**
 * What a store statement costs, from PostgreSQL's own account of running
 * it: the statements a store function sends are recorded, then each is run
 * again under EXPLAIN (ANALYZE, BUFFERS) with the same values (arrays
 * included). Rows and buffers, unlike wall time, do not change with the
 * load on the machine.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';

/** A runner over `database` that records every statement it sends, in order. */
export function recordingRunner(database: DatabaseHandle): { runner: SqlRunner; sent: SQL[] } {
  const inner = createRunner(database.client);
  const sent: SQL[] = [];
  const runner: SqlRunner = {
    rows: (query) => {
      sent.push(query);
      return inner.rows(query);
    },
    transaction: () => {
      throw new Error('recordingRunner records single statements; run transactions on a plain runner.');
    },
  };
  return { runner, sent };
}

/** One statement's cost. */
export interface StatementCost {
  /** Rows each table's scans visited (returned or filtered out), over all their loops, by table name. */
  rowsVisited: Record<string, number>;
  /** Shared buffers the statement touched (hit or read). */
  buffers: number;
  /** The plan as EXPLAIN (FORMAT JSON) gave it, for failure messages. */
  plan: unknown;
}

interface CostNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: CostNode[];
}

/** Runs `query` under EXPLAIN (ANALYZE, BUFFERS) on `database` and sums what its scans visited. */
export async function statementCost(database: DatabaseHandle, query: SQL): Promise<StatementCost> {
  const [row] = await createRunner(database.client).rows<{ 'QUERY PLAN': unknown }>(sql`explain (analyze, buffers, format json) ${query}`);
  const output = row!['QUERY PLAN'];
  const [{ Plan: root }] = (typeof output === 'string' ? JSON.parse(output) : output) as [{ Plan: CostNode }];
  const rowsVisited: Record<string, number> = {};
  const visit = (node: CostNode) => {
    const relation = node['Relation Name'];
    if (relation !== undefined) {
      // EXPLAIN gives rows and rows removed per loop.
      const perLoop = node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
      rowsVisited[relation] = (rowsVisited[relation] ?? 0) + Math.round(perLoop * node['Actual Loops']);
    }
    node.Plans?.forEach(visit);
  };
  visit(root);
  return { rowsVisited, buffers: root['Shared Hit Blocks'] + root['Shared Read Blocks'], plan: root };
}
