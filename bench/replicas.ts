/**
 * The read replicas row of `npm run bench`: a throwaway primary cluster and
 * a streaming replica of it on this box (bench/throwawayCluster.ts,
 * bench/streamingReplica.ts; the shared PostgreSQL is never touched), a
 * smaller copy of the bench data set seeded on the primary, and two
 * servers on it, one with DATABASE_REPLICA_URLS set to the replica and the
 * same without:
 *
 * 1. (b)'s newest page of the hot conversation, without a token, on each
 *    server in turn (ROUNDS runs each, interleaved, so a burst of load from
 *    elsewhere on this shared box lands on both sides of the ratio), and
 *    the share of reads the replica served (from `/metrics`,
 *    `backscroll_db_reads_total`);
 * 2. the freshness guarantee under load (bench/loadFresh.ts): clients that
 *    each send a message and at once read the newest page with the send's
 *    `Backscroll-Consistency` token, counting the reads that missed their
 *    send (must be 0) and which copy served them; then with the replica's
 *    replay held back by `recovery_min_apply_delay` (a little, then more
 *    than the server's REPLICA_MAX_WAIT_MS), where token reads wait for it
 *    or fall back to the primary; and the same without the token, which
 *    shows what the token prevents.
 *
 * Both clusters are stopped and their folders deleted at the end, also
 * when a step fails.
 */
import { openDatabase } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate.ts';
import { type BenchDataShape, seedBenchData } from '../src/seed/benchData.ts';
import { startBenchServer } from './benchServer.ts';
import type { FreshResult } from './loadFresh.ts';
import { combineRuns, type LoadResult } from './loadResult.ts';
import { readsBetween, readsByTarget, type ReadsServed, replicaShare } from './replicaReads.ts';
import { createStreamingReplica, type StreamingReplica } from './streamingReplica.ts';
import { type Cell, num, percent, type ResultTable, words } from './table.ts';
import { createThrowawayCluster, type ThrowawayCluster } from './throwawayCluster.ts';

/** A hot conversation of 50,000 messages among 300: (b) reads the same newest page, and the cluster seeds in seconds. */
const REPLICA_DATA: BenchDataShape = { conversations: 300, totalMessages: 80_000, hotMessages: 50_000, membersPerConversation: 5 };
const CONNECTIONS = 10;
/** Freshness clients, each in a conversation of its own. */
const FRESH_CLIENTS = 10;
/** The server's REPLICA_MAX_WAIT_MS: its default, set explicitly so the table names what ran. */
const MAX_WAIT_MS = 50;
/**
 * The replica's replay held back: by less than MAX_WAIT_MS (token reads that
 * reach it first wait, and read it), then by more (they read the primary;
 * reads without a token read it stale). Below REPLICA_MAX_LAG_MS (1 s), so
 * the replica stays in rotation.
 */
const APPLY_DELAYS_MS = [20, 300] as const;
/** Interleaved page runs per server. */
const ROUNDS = 3;

/** Runs a load process and reads its JSON line (bench/run.ts's `load`). */
export type JsonLoad = <T>(script: string, args: string[], env: Record<string, string>) => Promise<T>;

/** One freshness run: its settings, what the clients counted, and where the reads went. */
interface FreshRun {
  applyDelayMs: number;
  token: boolean;
  result: FreshResult;
  reads: ReadsServed;
}

/** What the replicas row measured. */
export interface ReplicasMeasurement {
  seed: { messages: number; seconds: number };
  /** The rounds combined (combineRuns), and each round. */
  withReplica: LoadResult & { reads: ReadsServed; runs: LoadResult[] };
  withoutReplica: LoadResult & { reads: ReadsServed; runs: LoadResult[] };
  fresh: FreshRun[];
}

type BenchServer = Awaited<ReturnType<typeof startBenchServer>>;

/** Stops a bench server and waits for it to exit. */
async function stopServer(server: BenchServer): Promise<void> {
  if (server.process.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => server.process.once('exit', () => resolve()));
  server.process.kill('SIGTERM');
  await exited;
}

/** The server's reads by target, as /metrics shows them now. */
async function scrapeReads(server: BenchServer): Promise<Record<string, number>> {
  const response = await fetch(server.url.replace('/graphql', '/metrics'));
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return readsByTarget(await response.text());
}

/** The reads served while `run` ran. */
async function counting<T>(server: BenchServer, run: () => Promise<T>): Promise<{ result: T; reads: ReadsServed }> {
  const before = await scrapeReads(server);
  const result = await run();
  return { result, reads: readsBetween(before, await scrapeReads(server)) };
}

/** Waits until the server's /readyz shows its replica in rotation (every process probes it every 2 s). */
async function replicaInRotation(server: BenchServer): Promise<void> {
  const readyz = server.url.replace('/graphql', '/readyz');
  for (const started = Date.now(); Date.now() - started < 30_000; await new Promise((r) => setTimeout(r, 250))) {
    const body = (await (await fetch(readyz)).json()) as { replicas?: { state: string }[] };
    if (body.replicas?.[0]?.state === 'in rotation') return;
  }
  throw new Error('the replica did not come into rotation within 30 s');
}

/** Measures the replicas row; `load` runs one load process, `log` reports progress. */
export async function measureReplicas(workers: number, seconds: number, load: JsonLoad, log: (line: string) => void): Promise<ReplicasMeasurement> {
  let primary: ThrowawayCluster | undefined;
  let replica: StreamingReplica | undefined;
  const servers: BenchServer[] = [];
  try {
    log('replicas: creating a throwaway primary cluster (initdb) on a free port...');
    primary = await createThrowawayCluster();
    const handle = await openDatabase({ kind: 'postgres', url: primary.url, poolSize: 2, statementTimeoutMs: 600_000 });
    let seed: ReplicasMeasurement['seed'];
    try {
      log("replicas: migrating it with the server's migrations...");
      await applyMigrations(handle);
      const outcome = await seedBenchData(handle.db, REPLICA_DATA, (line) => log(`replicas ${line}`), { concurrency: 2 });
      if (outcome.kind !== 'seeded') throw new Error('the throwaway primary was not empty');
      seed = { messages: outcome.messages, seconds: outcome.seconds };
    } finally {
      await handle.close();
    }
    log('replicas: copying it into a streaming replica (pg_basebackup -R) and starting that...');
    replica = await createStreamingReplica(primary);

    log(`replicas: two servers of ${workers} processes on the primary, one with DATABASE_REPLICA_URLS set to the replica...`);
    const withServer = await startBenchServer(primary.url, workers, { DATABASE_REPLICA_URLS: replica.url, REPLICA_MAX_WAIT_MS: String(MAX_WAIT_MS) });
    servers.push(withServer);
    const withoutServer = await startBenchServer(primary.url, workers);
    servers.push(withoutServer);
    await replicaInRotation(withServer);
    const page = (url: string, runSeconds: number) => load<LoadResult>('bench/loadHttp.ts', ['hot-newest', url, String(CONNECTIONS), String(runSeconds)], {});
    log('replicas: warming up both (3 s each)...');
    await page(withServer.url, 3);
    await page(withoutServer.url, 3);
    const withRuns: LoadResult[] = [];
    const withoutRuns: LoadResult[] = [];
    const readsBefore = await scrapeReads(withServer);
    for (let round = 1; round <= ROUNDS; round++) {
      log(`replicas: round ${round} of ${ROUNDS}, (b) newest page with the replica, ${seconds} s...`);
      withRuns.push(await page(withServer.url, seconds));
      log(`replicas: round ${round} of ${ROUNDS}, (b) newest page without it, ${seconds} s...`);
      withoutRuns.push(await page(withoutServer.url, seconds));
    }
    const withReads = readsBetween(readsBefore, await scrapeReads(withServer));
    const withoutReplica = combineRuns(withoutRuns);
    await stopServer(withoutServer);

    const fresh: FreshRun[] = [];
    const freshRun = async (applyDelayMs: number, token: boolean) => {
      log(`replicas: ${FRESH_CLIENTS} clients send then read ${token ? 'with' : 'without'} the token, apply delay ${applyDelayMs} ms, ${seconds} s...`);
      const { result, reads } = await counting(withServer, () =>
        load<FreshResult>('bench/loadFresh.ts', [withServer.url, String(FRESH_CLIENTS), String(seconds), token ? 'token' : 'no-token'], {}),
      );
      fresh.push({ applyDelayMs, token, result, reads });
    };
    await freshRun(0, true);
    for (const delay of APPLY_DELAYS_MS) {
      log(`replicas: holding the replica's replay back by ${delay} ms (recovery_min_apply_delay)...`);
      await replica.setApplyDelay(delay);
      // A reload is read at once; give the probes a round to see the replica as it is now.
      await new Promise((r) => setTimeout(r, 2500));
      await replicaInRotation(withServer);
      await freshRun(delay, true);
    }
    await freshRun(APPLY_DELAYS_MS.at(-1)!, false);
    await replica.setApplyDelay(0);
    return {
      seed,
      withReplica: { ...combineRuns(withRuns), reads: withReads, runs: withRuns },
      // Without replicas the server counts no reads by target: every one is the primary's.
      withoutReplica: { ...withoutReplica, reads: { primary: withoutReplica.requests, replicas: 0 }, runs: withoutRuns },
      fresh,
    };
  } finally {
    log('replicas: stopping the server and both clusters, deleting their folders...');
    for (const server of servers) await stopServer(server).catch(() => undefined);
    await replica?.destroy().catch((error: Error) => log(`replicas: the replica could not be removed: ${error.message}`));
    await primary?.destroy().catch((error: Error) => log(`replicas: the primary could not be removed: ${error.message}`));
  }
}

const share = (reads: ReadsServed): Cell => {
  const ratio = replicaShare(reads);
  return ratio === null ? words('no reads') : percent(ratio);
};

/** The replicas row's tables: page reads with and without the replica, then the freshness runs. */
export function replicasTables(m: ReplicasMeasurement, seconds: number): ResultTable[] {
  const pageRow = (label: string, r: ReplicasMeasurement['withReplica']) => ({
    label,
    cells: [num(r.perSecond), num(r.p50, 2), num(r.p99, 2), share(r.reads), num(r.failures)],
  });
  const freshLabel = (run: FreshRun) =>
    `${run.token ? 'with the send\'s token' : 'without a token'}, ${run.applyDelayMs === 0 ? 'no apply delay' : `replica ${run.applyDelayMs} ms behind`}`;
  return [
    {
      id: 'replicas-pages',
      title: `Read replicas: (b) newest page (50) of a 50,000-message conversation, one streaming replica on the same box (${CONNECTIONS} connections, ${ROUNDS} interleaved runs of ${seconds} s each; p50 and p99: the runs' median)`,
      header: ['', 'req/s', 'p50 ms', 'p99 ms', 'served by replica', 'failures'],
      rows: [
        pageRow('with DATABASE_REPLICA_URLS', m.withReplica),
        pageRow('without (primary only)', m.withoutReplica),
        { label: 'rate with / without', cells: [num(m.withReplica.perSecond / m.withoutReplica.perSecond, 2), words(''), words(''), words(''), words('')] },
      ],
    },
    {
      id: 'replicas-fresh',
      title: `Read replicas: read-your-writes under load (${FRESH_CLIENTS} clients, each sends then reads its conversation's newest page; REPLICA_MAX_WAIT_MS ${MAX_WAIT_MS}; ${seconds} s each)`,
      header: ['', 'pairs', 'missed their send', 'read by replica', 'read by primary', 'read p50 ms', 'read p99 ms', 'send p50 ms', 'failures'],
      rows: m.fresh.map((run) => ({
        label: freshLabel(run),
        cells: [
          num(run.result.pairs),
          num(run.result.missed),
          num(run.reads.replicas),
          num(run.reads.primary),
          num(run.result.readP50, 2),
          num(run.result.readP99, 2),
          num(run.result.sendP50, 2),
          num(run.result.failures),
        ],
      })),
    },
  ];
}
