import { describe, expect, it } from 'vitest';
import { chooseReplica, inRotation, type ReplicaState, replicaLagMs } from '../../src/history/replicaChoice.ts';

const MAX_LAG_MS = 1000;
const fresh = (replayed: bigint): ReplicaState => ({ up: true, replayed, lagMs: 0 });
const down: ReplicaState = { up: false, replayed: 500n, lagMs: 0 };
const lagging: ReplicaState = { up: true, replayed: 500n, lagMs: 1001 };
const unprobed: ReplicaState = { up: false, replayed: null, lagMs: null };

describe('Replica lag', () => {
  it('is zero for a replica that has replayed all it received, however old its last transaction', () => {
    expect(replicaLagMs({ replayed: 100n, received: 100n, replayAgeMs: 3_600_000 })).toBe(0);
    expect(replicaLagMs({ replayed: 100n, received: 100n, replayAgeMs: null })).toBe(0);
  });

  it('is zero for a replica that streams nothing (received unknown)', () => {
    expect(replicaLagMs({ replayed: 100n, received: null, replayAgeMs: 5000 })).toBe(0);
  });

  it('is the age of the last replayed transaction while replay trails what was received', () => {
    expect(replicaLagMs({ replayed: 99n, received: 100n, replayAgeMs: 250 })).toBe(250);
    expect(replicaLagMs({ replayed: 99n, received: 100n, replayAgeMs: -3 })).toBe(0);
  });

  it('is unknown (infinite) while behind with no transaction replayed, or with no replay position', () => {
    expect(replicaLagMs({ replayed: 99n, received: 100n, replayAgeMs: null })).toBe(Number.POSITIVE_INFINITY);
    expect(replicaLagMs({ replayed: null, received: 100n, replayAgeMs: 10 })).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('Rotation', () => {
  it('holds a replica that is up and lags at most the limit', () => {
    expect(inRotation(fresh(1n), MAX_LAG_MS)).toBe(true);
    expect(inRotation({ up: true, replayed: 1n, lagMs: 1000 }, MAX_LAG_MS)).toBe(true);
  });

  it('leaves out one that is down, lags past the limit, or was never probed', () => {
    expect([down, lagging, unprobed].map((state) => inRotation(state, MAX_LAG_MS))).toEqual([false, false, false]);
  });
});

describe('Choosing a replica for a read', () => {
  it('answers none when there are no replicas', () => {
    expect(chooseReplica([], null, MAX_LAG_MS, 0)).toBe(null);
    expect(chooseReplica([], 5n, MAX_LAG_MS, 0)).toBe(null);
  });

  it('takes the replicas in rotation in turn without a token', () => {
    const states = [fresh(10n), down, fresh(5n), lagging];
    expect([0, 1, 2, 3].map((turn) => chooseReplica(states, null, MAX_LAG_MS, turn))).toEqual([0, 2, 0, 2]);
  });

  it('takes only replicas that have replayed at least as far as the token', () => {
    const states = [fresh(10n), fresh(5n), fresh(20n)];
    expect([0, 1, 2].map((turn) => chooseReplica(states, 10n, MAX_LAG_MS, turn))).toEqual([0, 2, 0]);
    expect(chooseReplica(states, 20n, MAX_LAG_MS, 7)).toBe(2);
  });

  it('answers none when no replica has replayed as far as the token', () => {
    expect(chooseReplica([fresh(10n), fresh(19n)], 20n, MAX_LAG_MS, 0)).toBe(null);
  });

  it('never takes a replica out of rotation for a token, even one that has replayed far enough', () => {
    expect(chooseReplica([down, lagging], 1n, MAX_LAG_MS, 0)).toBe(null);
  });

  it('never takes a replica whose replay position is unknown for a token', () => {
    expect(chooseReplica([{ up: true, replayed: null, lagMs: 0 }], 1n, MAX_LAG_MS, 0)).toBe(null);
  });

  it('answers none when every replica is down or lagging', () => {
    expect(chooseReplica([down, lagging, unprobed], null, MAX_LAG_MS, 0)).toBe(null);
  });
});
