/**
 * The server's Prometheus metrics (prom-client), in a registry of its own per
 * server, so several servers in one process (tests) never mix their counts:
 * request duration and SQL statements per request by operation, errors by
 * code, the database pool in use and waiting, open subscriptions, the cold
 * archive (archiveMetrics.ts), and prom-client's default process metrics (CPU, memory, event loop, GC). In a
 * cluster worker a scrape answers for every worker (clusterScrape.ts); the
 * `aggregator` of each gauge says how the workers' values merge.
 */
import cluster from 'node:cluster';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ArchiveReadObserver } from '../archive/reader.ts';
import type { ReplicaSet } from '../db/replicaSet.ts';
import type { PoolUsage } from '../db/runner.ts';
import { type ArchiveTotals, registerArchiveMetrics } from './archiveMetrics.ts';
import { boundedLabels } from './boundedLabels.ts';
import { joinClusterMetrics } from './clusterScrape.ts';

/** Distinct operation names kept as labels; the rest count as `other`. */
const MAX_OPERATION_LABELS = 200;
/** Distinct error codes kept as labels (the server's own are about 20). */
const MAX_CODE_LABELS = 50;

/** What the metrics read when scraped. */
export interface MetricsSources {
  /** The database clients' pool counters (the main pool and the read pool); none: the pool gauges stay 0. */
  pools?: readonly (PoolUsage | undefined)[];
  /** Subscriptions open in this process. */
  openSubscriptions(): number;
  /** The read replicas (DATABASE_REPLICA_URLS); absent: no read or replica series. */
  replicas?: Pick<ReplicaSet, 'reads' | 'report'>;
  /** What the archive holds, read once per scrape; absent: the archive's gauges stay 0. */
  archiveTotals?(): Promise<ArchiveTotals>;
}

/** The metrics of one server. */
export interface ServerMetrics {
  /** Records one GraphQL request: its operation name (null: anonymous), how long it took and how many statements it sent. */
  observeRequest(operationName: string | null | undefined, seconds: number, statements: number): void;
  /** Counts one error by its `extensions.code`. */
  countError(code: string): void;
  /** Records one send statement: how many sends it took (src/store/sendCoalescer.ts). */
  observeSendStatement(sends: number): void;
  /** Counts one send forwarded to the worker that stores its conversation's sends, by how it came back (src/store/routedSends.ts). */
  countForwardedSend(answer: 'answered' | 'failed' | 'undelivered' | 'lost'): void;
  /** Feeds the archive's read metrics: join it to the process's segment reads (`observeArchiveReads`). */
  readonly archiveReads: ArchiveReadObserver;
  /** The exposition text and its content type; in a cluster worker, every worker's (rejects with `ClusterMetricsUnavailable` when they cannot be had). */
  render(): Promise<{ contentType: string; text: string }>;
}

/** Makes the metrics of one server over `sources`. */
export function createServerMetrics(sources: MetricsSources): ServerMetrics {
  const register = new Registry();
  collectDefaultMetrics({ register });
  const operationLabel = boundedLabels(MAX_OPERATION_LABELS);
  const codeLabel = boundedLabels(MAX_CODE_LABELS);
  const duration = new Histogram({
    name: 'backscroll_graphql_request_duration_seconds',
    help: 'GraphQL requests over HTTP, from the request reaching Apollo to its response, by operation name (anonymous, or other past 200 names).',
    labelNames: ['operation'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [register],
  });
  const sendStatements = new Histogram({
    name: 'backscroll_send_statement_sends',
    help: 'Sends per send statement: above 1 when sends to one conversation overlapped in a process and were stored together.',
    buckets: [1, 2, 4, 8, 16, 32],
    registers: [register],
  });
  const forwardedSends = new Counter({
    name: 'backscroll_sends_forwarded_total',
    help: 'Sends this worker handed to the worker that stores their conversation, by how they came back: answered, failed (the owner met an error), undelivered or lost (stored by this worker instead).',
    labelNames: ['answer'],
    registers: [register],
  });
  const statements = new Histogram({
    name: 'backscroll_graphql_request_sql_statements',
    help: 'SQL statements one GraphQL request sent, by operation name.',
    labelNames: ['operation'],
    buckets: [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 50],
    registers: [register],
  });
  const errors = new Counter({
    name: 'backscroll_graphql_errors_total',
    help: 'Errors answered, by extensions.code (requests refused before GraphQL, such as bad JSON or too large, included).',
    labelNames: ['code'],
    registers: [register],
  });
  const pools = (sources.pools ?? []).filter((pool) => pool !== undefined);
  const sum = (of: (pool: PoolUsage) => number) => pools.reduce((total, pool) => total + of(pool), 0);
  new Gauge({
    name: 'backscroll_db_pool_connections_in_use',
    help: 'Database connections running a statement or a transaction now (PGlite: 0 or 1).',
    registers: [register],
    // Every worker has a pool of its own: the connections in use are the sum.
    aggregator: 'sum',
    collect() {
      this.set(sum((pool) => Math.min(pool.inFlight, pool.size)));
    },
  });
  new Gauge({
    name: 'backscroll_db_pool_waiting',
    help: 'Statements and transactions waiting for a database connection now.',
    registers: [register],
    aggregator: 'sum',
    collect() {
      // On the read pool, statements pipelined behind a running one count here too.
      this.set(sum((pool) => Math.max(pool.inFlight - pool.size, 0)));
    },
  });
  new Gauge({
    name: 'backscroll_db_pool_size',
    help: 'Database connections the pools may open (DATABASE_POOL_SIZE and DATABASE_READ_POOL_SIZE per server process, summed over workers; PGlite: 1).',
    registers: [register],
    // Summed like the connections in use, so in use over size stays the share of the whole cluster's connections.
    aggregator: 'sum',
    collect() {
      this.set(sum((pool) => pool.size));
    },
  });
  new Gauge({
    name: 'backscroll_subscriptions_open',
    help: 'GraphQL subscriptions open over WebSocket (with several workers, all of them together).',
    registers: [register],
    // Each subscription lives in the one worker its socket reached.
    aggregator: 'sum',
    collect() {
      this.set(sources.openSubscriptions());
    },
  });
  if (sources.replicas !== undefined) registerReplicaMetrics(register, sources.replicas);
  // After the pool gauges: a scrape collects in registration order, so its own archive statement is not in the pool it reports.
  const archiveReads = registerArchiveMetrics(register, sources.archiveTotals && (() => sources.archiveTotals!()));
  // Only a worker forked by `runWorkers` has a primary that aggregates; a lone process (or a test) renders its own registry.
  const clusterText = cluster.isWorker ? joinClusterMetrics(register) : null;
  return {
    archiveReads,
    observeRequest(operationName, seconds, count) {
      const operation = operationLabel(operationName);
      duration.observe({ operation }, seconds);
      statements.observe({ operation }, count);
    },
    countError(code) {
      errors.inc({ code: codeLabel(code) });
    },
    observeSendStatement(sends) {
      sendStatements.observe(sends);
    },
    countForwardedSend(answer) {
      forwardedSends.inc({ answer });
    },
    async render() {
      return { contentType: register.contentType, text: clusterText ? await clusterText() : await register.metrics() };
    },
  };
}

/**
 * Reads routed per target (`primary`, `replica0`, `replica1`...: the replica's
 * place in DATABASE_REPLICA_URLS, never its URL), and each replica's lag and
 * state as this process last probed them.
 */
function registerReplicaMetrics(register: Registry, replicas: Pick<ReplicaSet, 'reads' | 'report'>): void {
  // The replica set counts; the counter follows it at each scrape.
  const seen = new Map<string, number>();
  new Counter({
    name: 'backscroll_db_reads_total',
    help: 'Read-only requests (query operations) by the copy that served them: primary, or replicaN (N: its place in DATABASE_REPLICA_URLS, from 0); a read retried on the primary after its replica failed counts for both.',
    labelNames: ['target'],
    registers: [register],
    collect() {
      const { primary, replicas: perReplica } = replicas.reads();
      const totals: [string, number][] = [['primary', primary], ...perReplica.map((n, i): [string, number] => [`replica${i}`, n])];
      for (const [target, total] of totals) {
        const delta = total - (seen.get(target) ?? 0);
        seen.set(target, total);
        // inc(0) still creates the series, so a replica that served nothing shows 0.
        this.inc({ target }, delta);
      }
    },
  });
  new Gauge({
    name: 'backscroll_db_replica_lag_seconds',
    help: 'How long each replica\'s replay trailed what it had received at its last probe (0: caught up); absent while unknown.',
    labelNames: ['replica'],
    registers: [register],
    // With several workers, the worst any of them saw.
    aggregator: 'max',
    collect() {
      this.reset();
      for (const report of replicas.report()) {
        if (report.lagMs !== null) this.set({ replica: String(report.replica) }, report.lagMs / 1000);
      }
    },
  });
  new Gauge({
    name: 'backscroll_db_replica_in_rotation',
    help: 'Whether each replica serves reads (1) or is out of rotation: down, lagging, or not a replica (0).',
    labelNames: ['replica'],
    registers: [register],
    aggregator: 'min',
    collect() {
      for (const report of replicas.report()) this.set({ replica: String(report.replica) }, report.state === 'in rotation' ? 1 : 0);
    },
  });
}
