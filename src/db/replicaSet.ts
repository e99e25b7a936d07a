/**
 * The read replicas of the primary (DATABASE_REPLICA_URLS): a pool per
 * replica, what is known of each, and where a read goes.
 *
 * Each replica is probed every PROBE_INTERVAL_MS (in the background, per
 * process): whether it answers, whether it is a replica, how far it has
 * replayed and how far replay trails what it has received. A read that fails
 * on a replica for a connection reason takes it out of rotation at once (the
 * caller retries on the primary); the next probe that answers puts it back.
 * The rules of which replica fits a read are pure (src/history/replicaChoice.ts).
 *
 * A replica can also stop answering with its connections open (its host
 * frozen, a network black hole): statements sent to it wait for ever, and a
 * cancel request would too. Every statement on a replica has a deadline
 * (`readTimeoutMs`, PROBE_TIMEOUT_MS for a probe); when one passes with no
 * answer, the replica leaves rotation and its pool is abandoned for a fresh
 * one: its stuck connections are closed, which fails at once (and so sends
 * to the primary) every other read waiting on them, instead of each waiting
 * out its own deadline, and no later statement is queued behind them.
 *
 * A read with a consistency token that no replica has replayed to yet polls
 * the replicas' replay position for at most `maxWaitMs`, then reads from the
 * primary: waiting longer would make a fresh read slower than the primary
 * it is meant to spare.
 */
import { sql } from 'drizzle-orm';
import { chooseReplica, inRotation, type ReplicaState, replicaLagMs } from '../history/replicaChoice.ts';
import { formatWalPosition, parseWalPosition } from '../history/walPosition.ts';
import { openPostgres, type PostgresHandle } from './client.ts';
import { withDeadline } from './deadline.ts';
import { DatabaseNoAnswerError } from './errors.ts';
import { createRunner, type SqlClient, type SqlRunner } from './runner.ts';

/** How often each replica is probed: a recovered replica is back in rotation within about this long. */
const PROBE_INTERVAL_MS = 2000;
/**
 * A probe that takes longer counts as failed: a replica that slow serves no
 * one well. With the interval, a replica that stops answering is out of
 * rotation within 3.5 s even when no read finds it out first.
 */
const PROBE_TIMEOUT_MS = 1500;
/** How often a read waiting for a token asks the replicas how far they have replayed. */
const WAIT_POLL_MS = 5;

/** Where one read goes. */
export type ReadTarget =
  | { kind: 'primary' }
  /** `replayed`: how far the replica had replayed when chosen, a lower bound of what the read sees. */
  | { kind: 'replica'; index: number; client: SqlClient; replayed: bigint | null };

/** A read sent to a replica. */
type ReplicaTarget = Extract<ReadTarget, { kind: 'replica' }>;

/** One replica as /readyz and the metrics show it (never its URL, which may hold a password). */
export interface ReplicaReport {
  replica: number;
  state: 'in rotation' | 'lagging' | 'down' | 'not a replica' | 'not probed yet';
  /** `pg_last_wal_replay_lsn()` as last seen. */
  replayed: string | null;
  /** Replay behind receipt, in milliseconds, as last probed; null when unknown. */
  lagMs: number | null;
}

/** The replicas of one process. */
export interface ReplicaSet {
  readonly count: number;
  /**
   * Where a read needing `needs` (a WAL position; null: no token) goes: a
   * replica in rotation that has replayed that far, waiting up to
   * `maxWaitMs` for one, else the primary. Counts the read for the metrics.
   */
  route(needs: bigint | null): Promise<ReadTarget>;
  /**
   * A read on `target` failed for a connection reason (`error`, a
   * DatabaseUnavailableError): out of rotation until a probe answers, and
   * when the replica did not answer (DatabaseNoAnswerError) its pool is
   * replaced. Counts the retry on the primary.
   */
  failed(target: ReplicaTarget, error: unknown): void;
  /** The primary's WAL position now (`pg_current_wal_lsn()`): the token of a request that wrote. */
  primaryPosition(): Promise<bigint>;
  /** The primary's position as last probed: a lower bound of what a read on it sees; null before the first probe. */
  lastPrimaryPosition(): bigint | null;
  /** Each replica's state, in the order configured. */
  report(): ReplicaReport[];
  /** Reads routed since start: to the primary, and to each replica. */
  reads(): { primary: number; replicas: number[] };
  /** Stops probing and closes the replicas' pools. */
  close(): Promise<void>;
}

/** How the replicas are used. */
export interface ReplicaSetOptions {
  maxWaitMs: number;
  maxLagMs: number;
  /**
   * How long a statement on a replica may go unanswered before the read is
   * retried on the primary (REPLICA_READ_TIMEOUT_MS); no longer than the
   * statement timeout plus 1 s, every statement's deadline (client.ts).
   */
  readTimeoutMs: number;
  /** Connections per replica pool, and its statement timeout (as the primary's). */
  poolSize: number;
  statementTimeoutMs: number;
  /** Told when a replica leaves or returns to rotation (logged by the wiring). */
  onChange?(report: ReplicaReport): void;
}

/** Connections to one replica, replaced whole when the replica stops answering on them. */
interface Pool {
  handle: PostgresHandle;
  /** For the probes and the replay polls. */
  db: SqlRunner;
}

interface Replica {
  url: string;
  pool: Pool;
  state: ReplicaState;
  report: ReplicaReport['state'];
  /** The replay position being read for waiting reads, shared by all of them. */
  polling: Promise<void> | null;
  reads: number;
}

interface ProbeRow {
  recovering: boolean;
  replayed: string | null;
  received: string | null;
  replay_age_ms: number | null;
}

const probeStatement = sql`select pg_is_in_recovery() as recovering,
  pg_last_wal_replay_lsn()::text as replayed,
  pg_last_wal_receive_lsn()::text as received,
  (extract(epoch from now() - pg_last_xact_replay_timestamp()) * 1000)::float8 as replay_age_ms`;
const replayStatement = sql`select pg_last_wal_replay_lsn()::text as replayed`;
const primaryStatement = sql`select pg_current_wal_lsn()::text as position`;

const position = (text: string | null): bigint | null => (text === null ? null : parseWalPosition(text));

/** Opens a pool on each of `urls` and starts probing them; `primary` is where writes go. */
export async function openReplicaSet(urls: readonly string[], primary: SqlClient, options: ReplicaSetOptions): Promise<ReplicaSet> {
  const openPool = (url: string): Pool => {
    const handle = openPostgres({
      kind: 'postgres',
      url,
      poolSize: options.poolSize,
      statementTimeoutMs: options.statementTimeoutMs,
      deadlineMs: options.readTimeoutMs,
    });
    return { handle, db: createRunner(handle.client) };
  };
  const replicas: Replica[] = urls.map((url) => ({
    url,
    pool: openPool(url),
    state: { up: false, replayed: null, lagMs: null },
    report: 'not probed yet' as const,
    polling: null,
    reads: 0,
  }));
  const primaryDb = createRunner(primary);
  let primaryReads = 0;
  let primaryPosition: bigint | null = null;
  let turn = 0;
  let closed = false;
  /** Pools being abandoned: `close` waits for them. */
  const abandoning = new Set<Promise<void>>();

  const settle = (index: number, next: ReplicaReport['state']) => {
    const replica = replicas[index]!;
    const before = replica.report;
    replica.report = next;
    if (before !== next) options.onChange?.(reportOf(index));
  };
  const reportOf = (index: number): ReplicaReport => {
    const { state, report } = replicas[index]!;
    return {
      replica: index,
      state: report,
      replayed: state.replayed === null ? null : formatWalPosition(state.replayed),
      lagMs: state.lagMs === null || !Number.isFinite(state.lagMs) ? null : Math.round(state.lagMs),
    };
  };

  /**
   * Replica `index` failed on `pool` with `error`: out of rotation, and a
   * pool it did not answer on is abandoned for a fresh one. A failure on a
   * pool already replaced says nothing of the replica now (a read waiting
   * on it was failed by the replacement itself).
   */
  const fail = (index: number, pool: Pool, error: unknown) => {
    const replica = replicas[index]!;
    if (replica.pool !== pool) return;
    replica.state = { ...replica.state, up: false };
    settle(index, 'down');
    if (!(error instanceof DatabaseNoAnswerError) || closed) return;
    replica.pool = openPool(replica.url);
    const abandoned = pool.handle.abandon().catch(() => undefined);
    abandoning.add(abandoned);
    void abandoned.finally(() => abandoning.delete(abandoned));
  };

  const probe = async (index: number) => {
    const replica = replicas[index]!;
    const pool = replica.pool;
    try {
      // On the runner's deadline (readTimeoutMs) too, whichever is shorter; either fails as DatabaseNoAnswerError.
      const [row] = await withDeadline(pool.db.rows<ProbeRow>(probeStatement), PROBE_TIMEOUT_MS, () => undefined);
      // What a pool replaced meanwhile answered is out of date: the next probe decides.
      if (replica.pool !== pool) return;
      if (!row!.recovering) {
        // A promoted replica, or a URL naming a primary: its data follows no WAL of ours.
        replica.state = { up: false, replayed: null, lagMs: null };
        settle(index, 'not a replica');
        return;
      }
      const sample = { replayed: position(row!.replayed), received: position(row!.received), replayAgeMs: row!.replay_age_ms };
      replica.state = { up: true, replayed: sample.replayed, lagMs: replicaLagMs(sample) };
      settle(index, inRotation(replica.state, options.maxLagMs) ? 'in rotation' : 'lagging');
    } catch (error) {
      fail(index, pool, error);
    }
  };
  const probePrimary = async () => {
    try {
      primaryPosition = await readPrimaryPosition();
    } catch {
      // The primary's own failures answer its requests; nothing to learn here.
    }
  };
  const readPrimaryPosition = async () => {
    const [row] = await primaryDb.rows<{ position: string }>(primaryStatement);
    const read = parseWalPosition(row!.position)!;
    if (primaryPosition === null || read > primaryPosition) primaryPosition = read;
    return read;
  };

  let timer: NodeJS.Timeout | null = null;
  const probeAll = () => Promise.all([probePrimary(), ...replicas.map((_, index) => probe(index))]);
  const schedule = () => {
    timer = setTimeout(() => void probeAll().finally(() => !closed && schedule()), PROBE_INTERVAL_MS);
    timer.unref();
  };
  // Reads go to the primary until the first probe has answered.
  void probeAll().finally(() => !closed && schedule());

  /** Reads how far the replicas in rotation have replayed, one statement per replica whoever is waiting. */
  const pollReplay = () =>
    Promise.all(
      replicas.map((replica, index) => {
        if (!inRotation(replica.state, options.maxLagMs)) return undefined;
        const pool = replica.pool;
        replica.polling ??= pool.db
          .rows<{ replayed: string | null }>(replayStatement)
          .then(([row]) => {
            const replayed = position(row!.replayed);
            if (replayed !== null && (replica.state.replayed === null || replayed > replica.state.replayed)) {
              replica.state = { ...replica.state, replayed };
            }
          })
          .catch((error: unknown) => fail(index, pool, error))
          .finally(() => {
            replica.polling = null;
          });
        return replica.polling;
      }),
    );

  const choose = (needs: bigint | null): ReadTarget | null => {
    const index = chooseReplica(
      replicas.map((r) => r.state),
      needs,
      options.maxLagMs,
      turn++,
    );
    if (index === null) return null;
    const replica = replicas[index]!;
    replica.reads += 1;
    return { kind: 'replica', index, client: replica.pool.handle.client, replayed: replica.state.replayed };
  };
  const toPrimary = (): ReadTarget => {
    primaryReads += 1;
    return { kind: 'primary' };
  };

  return {
    count: replicas.length,
    async route(needs) {
      const chosen = choose(needs);
      if (chosen !== null) return chosen;
      const anyInRotation = replicas.some((r) => inRotation(r.state, options.maxLagMs));
      if (needs === null || !anyInRotation || options.maxWaitMs === 0) return toPrimary();
      const deadline = performance.now() + options.maxWaitMs;
      for (;;) {
        // A replica that stopped answering holds its poll until the read timeout: wait no longer than the read may.
        await atMost(pollReplay(), deadline - performance.now());
        const later = choose(needs);
        if (later !== null) return later;
        const left = deadline - performance.now();
        if (left <= 0) return toPrimary();
        await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_POLL_MS, left)));
      }
    },
    failed(target, error) {
      const replica = replicas[target.index]!;
      if (replica.pool.handle.client === target.client) fail(target.index, replica.pool, error);
      primaryReads += 1;
    },
    primaryPosition: readPrimaryPosition,
    lastPrimaryPosition: () => primaryPosition,
    report: () => replicas.map((_, index) => reportOf(index)),
    reads: () => ({ primary: primaryReads, replicas: replicas.map((r) => r.reads) }),
    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      await Promise.all([...replicas.map((r) => r.pool.handle.close()), ...abandoning]);
    },
  };
}

/** Settles once `work` has settled or `ms` have passed, whichever is first. */
function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    work.then(done, done);
  });
}
