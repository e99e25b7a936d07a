/**
 * One request's way to the database: its statements go to the primary
 * unless the request is known to only read (`readOnly`, said of a query
 * operation before it executes). Then, when there are read replicas, they
 * go to the replica the replica set chooses for the request's consistency
 * token, decided once, at its first statement, so every statement of a
 * request reads the same copy; on the primary, they go through its read
 * pool (pipelinedReads.ts) when it has one.
 *
 * A read that fails on a replica for a connection reason (it stopped, the
 * network dropped, or it did not answer within the replica read timeout)
 * runs again on the primary, and so does the rest of the request: a replica
 * failing costs a retry, never an error. So does a
 * statement a replica refuses as a write (SQLSTATE 25006), in case a read
 * path ever writes: it would be a bug, but not one to show a client.
 *
 * The response's token (`token`) is the primary's WAL position after a
 * request that may have written, else the position the request read at
 * (what its replica had replayed when chosen, or what the primary had
 * written when last probed; nothing for a request that read nothing),
 * never earlier than the token it was given.
 */
import { formatWalPosition, laterPosition } from '../history/walPosition.ts';
import { DatabaseUnavailableError } from './errors.ts';
import type { ReadTarget, ReplicaSet } from './replicaSet.ts';
import { pipelinedReads } from './pipelinedReads.ts';
import { createRunner, type SqlClient, type SqlRunner, type StatementTally } from './runner.ts';

/** How one request reaches the database. */
export interface RequestRoute {
  /** Runs the request's statements on the copy chosen for it, counted into its tally. */
  readonly db: SqlRunner;
  /** The request only reads: its statements may go to a replica. Said before its first statement; said later, it changes nothing. */
  readOnly(): void;
  /**
   * The consistency token the response carries (`wrote`: the request may
   * have written, a mutation), or null when there are no replicas.
   */
  token(wrote: boolean): Promise<string | null>;
}

/** SQLSTATE read_only_sql_transaction: a write sent to a replica. */
const READ_ONLY = '25006';

/** Whether a failure on a replica should be retried on the primary. */
function retryOnPrimary(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === READ_ONLY;
}

/**
 * The route of one request over `primary` and `replicas` (null: none
 * configured), asked for `given` (the request's token, or null); `reads` is
 * the primary's read pool, if it has one.
 */
export function createRequestRoute(
  primary: SqlClient,
  replicas: ReplicaSet | null,
  given: bigint | null,
  tally: StatementTally,
  reads: SqlClient | null = null,
): RequestRoute {
  const onPrimary = createRunner(primary, tally);
  const readsOnPrimary = reads === null ? onPrimary : pipelinedReads(reads, onPrimary, tally);
  // The primary's main pool until told otherwise: whatever is not known to only read may write.
  let readsOnly = false;
  const primaryFor = () => (readsOnly ? readsOnPrimary : onPrimary);
  if (replicas === null || replicas.count === 0) {
    if (reads === null) return { db: onPrimary, readOnly: () => undefined, token: async () => null };
    // Decided at the first statement, as on the replicas' route below.
    let chosen: SqlRunner | null = null;
    const runner = () => (chosen ??= primaryFor());
    return {
      db: { rows: (query) => runner().rows(query), transaction: (work) => runner().transaction(work) },
      readOnly() {
        readsOnly = true;
      },
      token: async () => null,
    };
  }
  let target: Promise<ReadTarget> | null = null;
  const targetOf = () => (target ??= readsOnly ? replicas.route(given) : Promise.resolve({ kind: 'primary' } as const));

  const run = async <T>(work: (db: SqlRunner) => Promise<T>): Promise<T> => {
    const chosen = await targetOf();
    if (chosen.kind === 'primary') return work(primaryFor());
    try {
      return await work(createRunner(chosen.client, tally));
    } catch (error) {
      if (!retryOnPrimary(error)) throw error;
      if (error instanceof DatabaseUnavailableError) replicas.failed(chosen, error);
      // The rest of the request reads the primary too, so it reads one copy from here on.
      target = Promise.resolve({ kind: 'primary' });
      return work(primaryFor());
    }
  };

  return {
    db: {
      rows: (query) => run((db) => db.rows(query)),
      transaction: (work) => run((db) => db.transaction(work)),
    },
    readOnly() {
      readsOnly = true;
    },
    async token(wrote) {
      if (wrote) {
        try {
          return formatWalPosition(laterPosition(given, await replicas.primaryPosition())!);
        } catch {
          // The primary is down: the request failed anyway; echo what it was given.
          return given === null ? null : formatWalPosition(given);
        }
      }
      // No statement ran: nothing was read, so nothing more is promised than was asked for.
      const chosen = target === null ? null : await target;
      const readAt = chosen === null ? null : chosen.kind === 'replica' ? chosen.replayed : replicas.lastPrimaryPosition();
      const position = laterPosition(given, readAt);
      return position === null ? null : formatWalPosition(position);
    },
  };
}
