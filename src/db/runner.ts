/**
 * How the store runs SQL: one small interface over postgres.js and PGlite.
 * Statements run as prepared statements on PostgreSQL (drizzle's `execute`
 * sends every raw statement unprepared, so PostgreSQL parsed and planned the
 * page statement on every request), and each runner counts the statements
 * it sends into the tally it was made with, so a request's cost is recorded
 * without any global state.
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { withDeadline } from './deadline.ts';
import { classifyDatabaseError } from './errors.ts';

/** What one scope (usually a request) has sent so far. */
export interface StatementTally {
  statements: number;
  /**
   * The SQL text of each statement, in order, for test failure messages;
   * filled only over a client with `keepStatementTexts` (tests), so a runner
   * that lives as long as the process holds no more than its count.
   */
  texts?: string[];
}

/** Runs statements; made per request by `createRunner`. */
export interface SqlRunner {
  /** Runs one statement and answers its rows. */
  rows<Row>(query: SQL): Promise<Row[]>;
  /** Runs `work` in one transaction: all of its statements commit or none do. */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>;
}

/**
 * What is using one client's connections right now, counted by every runner
 * over it: a statement outside a transaction, or a whole transaction, holds
 * one connection while it runs (a statement inside a transaction adds none).
 * Past `size`, the rest wait for a connection. Read by the pool gauges
 * (src/metrics/); postgres.js does not expose its own pool's state.
 */
export interface PoolUsage {
  /** Statements and transactions started and not yet answered. */
  inFlight: number;
  /** Connections the client may open (1 for PGlite, which runs one statement at a time). */
  readonly size: number;
}

/** What every client may carry besides its connection. */
interface ClientOptions {
  usage?: PoolUsage;
  /** Record each statement's text in the tally (`StatementTally.texts`); set by the test harness only. */
  keepStatementTexts?: boolean;
  /**
   * Called with each statement's text and values before it is sent; set by
   * tests only (the partitioned run, test/helpers/routing.ts, which explains
   * every statement the server sent on the layout Citus would have).
   */
  recordStatement?: (text: string, params: readonly unknown[]) => void;
}

/** The driver-level client a runner sends through. */
export type SqlClient =
  /** `deadlineMs`: the longest a statement (or a transaction) may keep a request waiting; see deadline.ts. */
  | ({ kind: 'postgres'; sql: postgres.Sql; deadlineMs: number } & ClientOptions)
  | ({ kind: 'pglite'; pglite: PGlite } & ClientOptions);

/** Runs `work` counted in `usage` (when there is one) until it settles. */
async function holding<T>(usage: PoolUsage | undefined, work: () => Promise<T>): Promise<T> {
  if (usage === undefined) return work();
  usage.inFlight += 1;
  try {
    return await work();
  } finally {
    usage.inFlight -= 1;
  }
}

const dialect = new PgDialect();

/** Counts (and, in tests, records) one statement about to be sent. */
type Count = (text: string, params: readonly unknown[]) => void;

/**
 * Makes a runner over `client` that counts every statement it sends into
 * `tally` (and keeps its text there when the client asks). Long-lived
 * callers may keep one runner: without texts, a tally is one number.
 */
export function createRunner(client: SqlClient, tally: StatementTally = { statements: 0 }): SqlRunner {
  const record = client.recordStatement;
  const counted = client.keepStatementTexts
    ? (text: string) => {
        tally.statements += 1;
        (tally.texts ??= []).push(text);
      }
    : () => {
        tally.statements += 1;
      };
  const count: Count =
    record === undefined
      ? counted
      : (text, params) => {
          record(text, params);
          counted(text);
        };
  if (client.kind === 'postgres') return postgresRunner(client.sql, client.deadlineMs, count, client.usage);
  return pgliteRunner(client.pglite, count, client.usage);
}

/** `usage`: the client's pool counter; undefined inside a transaction, whose connection is already counted. */
function postgresRunner(
  sql: postgres.Sql | postgres.TransactionSql,
  deadlineMs: number,
  count: Count,
  usage: PoolUsage | undefined,
): SqlRunner {
  return {
    async rows<Row>(query: SQL) {
      const { sql: text, params } = dialect.sqlToQuery(query);
      count(text, params);
      return holding(usage, async () => {
        const pending = sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true });
        try {
          return (await withDeadline(pending, deadlineMs, () => void pending.cancel())) as unknown as Row[];
        } catch (error) {
          throw classifyDatabaseError(error);
        }
      });
    },
    async transaction<T>(work: (tx: SqlRunner) => Promise<T>) {
      if (!('begin' in sql)) throw new Error('Transactions do not nest; run the work in the enclosing one.');
      return holding(usage, async () => {
        try {
          // A transaction cannot be withdrawn once begun; if it commits after
          // the deadline answered, the client's retry with the same
          // clientMsgId finds it (sends are idempotent).
          const pending = sql.begin((tx) => work(postgresRunner(tx, deadlineMs, count, undefined)));
          return (await withDeadline(pending, deadlineMs, () => undefined)) as T;
        } catch (error) {
          throw classifyDatabaseError(error);
        }
      });
    },
  };
}

function pgliteRunner(pglite: PGlite | Transaction, count: Count, usage: PoolUsage | undefined): SqlRunner {
  return {
    async rows<Row>(query: SQL) {
      const { sql: text, params } = dialect.sqlToQuery(query);
      count(text, params);
      return holding(usage, async () => (await pglite.query<Row>(text, params)).rows);
    },
    async transaction<T>(work: (tx: SqlRunner) => Promise<T>) {
      if (!('transaction' in pglite)) throw new Error('Transactions do not nest; run the work in the enclosing one.');
      return holding(usage, () => pglite.transaction((tx) => work(pgliteRunner(tx, count, undefined))));
    },
  };
}
