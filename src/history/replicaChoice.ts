/**
 * Which copy of the database may serve a read: the pure rules behind the
 * replica set (src/db/replicaSet.ts), which feeds them what its probes and
 * reads have seen.
 *
 * - A replica is in rotation while its last probe answered, it is a replica
 *   (in recovery), its last read did not fail for a connection reason, and
 *   its lag is within the limit.
 * - A read with a token goes to a replica in rotation that has replayed at
 *   least that far; without a token, to any replica in rotation. Replicas
 *   take turns. No replica fits: the caller waits a little or reads from the
 *   primary.
 */

/** What the replica set knows of one replica. */
export interface ReplicaState {
  /** Its last probe answered, as a replica, and no read has failed on it since. */
  up: boolean;
  /** `pg_last_wal_replay_lsn()` as last seen; null: not known. */
  replayed: bigint | null;
  /** How long its replay trails what it has received (`replicaLagMs`); null: not known. */
  lagMs: number | null;
}

/** What one probe of a replica read. */
export interface ReplicaSample {
  replayed: bigint | null;
  /** `pg_last_wal_receive_lsn()`: null while it streams nothing (started from an archive only). */
  received: bigint | null;
  /** `now() - pg_last_xact_replay_timestamp()`: the age of the last transaction it replayed; null before it replayed one. */
  replayAgeMs: number | null;
}

/**
 * How long a replica's replay trails what it has received, in milliseconds.
 * A replica that has replayed all it received is not lagging, however old
 * its last replayed transaction is (an idle primary sends none); one that is
 * behind trails by the age of the last transaction it replayed, and by an
 * unknown (infinite) time when it has replayed none yet.
 */
export function replicaLagMs(sample: ReplicaSample): number {
  if (sample.replayed === null) return Number.POSITIVE_INFINITY;
  if (sample.received === null || sample.replayed >= sample.received) return 0;
  return sample.replayAgeMs === null ? Number.POSITIVE_INFINITY : Math.max(0, sample.replayAgeMs);
}

/** Whether `state` may serve reads at all: up, and lagging no more than `maxLagMs`. */
export function inRotation(state: ReplicaState, maxLagMs: number): boolean {
  return state.up && state.lagMs !== null && state.lagMs <= maxLagMs;
}

/**
 * The replica (its index in `states`) that serves a read needing `needs`
 * (null: no token), or null when none fits. `turn` spreads reads: the
 * fitting replicas are taken in turn, starting from `turn` modulo their count.
 */
export function chooseReplica(states: readonly ReplicaState[], needs: bigint | null, maxLagMs: number, turn: number): number | null {
  const fitting: number[] = [];
  states.forEach((state, index) => {
    if (!inRotation(state, maxLagMs)) return;
    if (needs !== null && (state.replayed === null || state.replayed < needs)) return;
    fitting.push(index);
  });
  if (fitting.length === 0) return null;
  return fitting[turn % fitting.length]!;
}
