/**
 * A bound on the database time of a whole request, not only of each
 * statement: a request that has already spent `budgetMs` waiting on the
 * database gets no further statement, so it cannot hold the pool (or
 * PGlite's single connection) for many seconds through many short
 * statements. Time is summed per statement and transaction, overlapping
 * ones each counting in full (each holds a connection).
 */
import { DatabaseTimeoutError } from './errors.ts';
import type { SqlRunner } from './runner.ts';

/** `runner`, refusing further statements once `budgetMs` of database time is spent. */
export function withTimeBudget(runner: SqlRunner, budgetMs: number, now: () => number = () => performance.now()): SqlRunner {
  let spentMs = 0;
  const timed = async <T>(work: () => Promise<T>): Promise<T> => {
    if (spentMs >= budgetMs) {
      throw new DatabaseTimeoutError(`This request has used its ${budgetMs} ms of database time (REQUEST_DATABASE_TIME_MS).`);
    }
    const started = now();
    try {
      return await work();
    } finally {
      spentMs += now() - started;
    }
  };
  return {
    rows: (query) => timed(() => runner.rows(query)),
    // Statements inside the transaction are timed as the transaction.
    transaction: (work) => timed(() => runner.transaction(work)),
  };
}
