/**
 * Where a query operation's statements run on the primary: on the read pool,
 * a postgres.js client of few connections (DATABASE_READ_POOL_SIZE), so that
 * the statements of concurrent requests queue up on them and PostgreSQL
 * takes them back to back, pipelined, rather than each waking a backend of
 * its own. On the bench data that cost PostgreSQL about a third less CPU a
 * page (README, Performance: the twenty-fifth session).
 *
 * A statement waits behind the ones pipelined ahead of it on its
 * connection, so the read pool takes at most `READ_PIPELINE_DEPTH` of them
 * a connection; past that, a read goes to the main pool, whose connections
 * run side by side as before. One slow read thus holds up a few others,
 * never a queue of them. Transactions (only writes use them) run on the
 * main pool: one would hold a read connection to itself.
 */
import { createRunner, type PoolUsage, type SqlClient, type SqlRunner, type StatementTally } from './runner.ts';

/** Statements a read connection may hold at once (the one running and those pipelined behind it). */
export const READ_PIPELINE_DEPTH = 4;

/** Whether the read pool counted by `usage` takes one more statement, or it should go to the main pool. */
export function readPoolHasRoom(usage: PoolUsage): boolean {
  return usage.inFlight < usage.size * READ_PIPELINE_DEPTH;
}

/** A runner of read-only statements over the read pool `reads`, overflowing to `primary`; counted into `tally`. */
export function pipelinedReads(reads: SqlClient, primary: SqlRunner, tally: StatementTally): SqlRunner {
  const onReads = createRunner(reads, tally);
  const usage = reads.usage;
  return {
    rows: (query) => (usage === undefined || readPoolHasRoom(usage) ? onReads : primary).rows(query),
    transaction: (work) => primary.transaction(work),
  };
}
