/**
 * Counts the SQL statements each request runs, so tests (and metrics) can
 * prove that a page costs a constant number of round trips.
 *
 * A request opens a scope with `countStatements`; drizzle's logger reports
 * every statement it sends, and the statement is charged to the scope of the
 * async call chain that sent it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'drizzle-orm/logger';

/** What one scope has seen so far. */
export interface StatementTally {
  statements: number;
  /** The SQL text of each statement, in order; kept for test failure messages. */
  texts: string[];
}

const scopes = new AsyncLocalStorage<StatementTally>();

/** Runs `fn` so that every statement sent inside it (however deep) is added to `tally`. */
export function countStatementsInto<T>(tally: StatementTally, fn: () => T): T {
  return scopes.run(tally, fn);
}

/** The drizzle logger that feeds the tallies; give it to every drizzle instance. */
export const statementCountingLogger: Logger = {
  logQuery(query: string): void {
    const tally = scopes.getStore();
    if (tally === undefined) return;
    tally.statements += 1;
    tally.texts.push(query);
  },
};
