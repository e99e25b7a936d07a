/**
 * The per-request context: who is asking, the loaders bound to them, and the
 * request's statistics (statements and loader batches) for tests and metrics.
 */
import type { GraphQLError } from 'graphql';
import type { Authentication } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { Publisher } from '../store/notify.ts';
import type { SendCoalescer } from '../store/sendCoalescer.ts';
import type { RetentionClock } from '../store/sqlFragments.ts';
import type { ReplicaSet } from '../db/replicaSet.ts';
import { createRequestRoute, type RequestRoute } from '../db/requestRoute.ts';
import type { SqlClient, SqlRunner, StatementTally } from '../db/runner.ts';
import { withTimeBudget } from '../db/timeBudget.ts';
import type { OperationAnalysis } from './gate/analyseOperation.ts';
import { unauthenticated } from './errors.ts';
import { createLoaders, type LoaderBatch, type Loaders } from './loaders.ts';

/** What one request did, for assertions and metrics. */
export interface RequestStats extends StatementTally {
  batches: LoaderBatch[];
}

export interface RequestContext {
  auth: Authentication;
  /** Runs this request's SQL and counts it into `stats`: on the primary, or on a replica for a query operation (consistencyPlugin.ts, src/db/requestRoute.ts). */
  db: SqlRunner;
  /** Which copy of the database this request reads, and the consistency token it answers with. */
  route: RequestRoute;
  config: Config;
  stats: RequestStats;
  /** The server's retention limits and this request's "now": every read of the request applies the same cut-off. */
  retention: RetentionClock;
  /** Null when the request is not authenticated; resolvers go through `viewerOf`. */
  loaders: Loaders | null;
  /** Where writes hand their live events once committed: the process's one publisher. */
  publisher: Publisher;
  /** The process's sends, stored together when they overlap on a conversation (src/store/sendCoalescer.ts). */
  sends: SendCoalescer;
  /**
   * Errors fields report beside the data they still answer (a page cut
   * short by an unreadable archive segment); the executor adds them to the
   * response's `errors`.
   */
  partialErrors: GraphQLError[];
  /** The operation as the gate read it (src/graphql/gate/): what the executor runs. Set once the gate admits it. */
  gate?: OperationAnalysis;
}

/** The read replicas, the primary's read pool and the consistency token a request came with (src/db/requestRoute.ts). */
export interface ReadRouting {
  /** null: no replicas, everything reads the primary. */
  replicas: ReplicaSet | null;
  /** The primary's read pool (src/db/pipelinedReads.ts); null: none. */
  reads: SqlClient | null;
  /** The WAL position of the request's `Backscroll-Consistency` header; null: none. */
  given: bigint | null;
}

/** Everything on the primary, with no token: subscriptions, WebSocket operations, tests. */
const PRIMARY_ONLY: ReadRouting = { replicas: null, reads: null, given: null };

/** What a server process's writes share: its publisher of live events and its send coalescer. */
export interface ProcessWrites {
  publisher: Publisher;
  sends: SendCoalescer;
}

/** Builds the context of one request. */
export function createContext(
  client: SqlClient,
  config: Config,
  auth: Authentication,
  stats: RequestStats,
  { publisher, sends }: ProcessWrites,
  routing: ReadRouting = PRIMARY_ONLY,
): RequestContext {
  const route = createRequestRoute(client, routing.replicas, routing.given, stats, routing.reads);
  const db = withTimeBudget(route.db, config.requestDatabaseTimeMs);
  const retention: RetentionClock = { server: config.retention, now: new Date() };
  const loaders = auth.kind === 'user' ? createLoaders(db, auth.userId, retention, stats.batches) : null;
  return { auth, db, route, config, stats, retention, loaders, publisher, sends, partialErrors: [] };
}

/** The authenticated viewer and their loaders, or the `UNAUTHENTICATED` error. */
export function viewerOf(context: RequestContext): { viewerId: string; admin: boolean; loaders: Loaders } {
  if (context.auth.kind !== 'user' || context.loaders === null) {
    throw unauthenticated(
      context.auth.kind === 'invalid' ? context.auth.reason : 'This operation needs an `Authorization: Bearer <token>` header.',
    );
  }
  return { viewerId: context.auth.userId, admin: context.auth.admin, loaders: context.loaders };
}
