import { describe, expect, it } from 'vitest';
import { readsBetween, readsByTarget, replicaShare } from '../../bench/replicaReads.ts';

const BEFORE = `# HELP backscroll_db_reads_total Read-only requests (query operations) by the copy that served them.
# TYPE backscroll_db_reads_total counter
backscroll_db_reads_total{target="primary"} 12
backscroll_db_reads_total{target="replica0"} 100
backscroll_db_replica_in_rotation{replica="0"} 1
backscroll_graphql_errors_total{code="TIMEOUT"} 3
`;
const AFTER = `backscroll_db_reads_total{target="primary"} 15
backscroll_db_reads_total{target="replica0"} 197
backscroll_db_reads_total{target="replica1"} 50
`;

describe('Bench replica reads: where reads went, from /metrics', () => {
  it('reads each target of backscroll_db_reads_total and nothing else', () => {
    expect(readsByTarget(BEFORE)).toEqual({ primary: 12, replica0: 100 });
  });

  it('finds no targets on a server without replicas', () => {
    expect(readsByTarget('# HELP backscroll_graphql_errors_total Errors.\nbackscroll_graphql_errors_total{code="TIMEOUT"} 3\n')).toEqual({});
  });

  it('counts the reads between two scrapes, every replica together, a target new since the first from 0', () => {
    expect(readsBetween(readsByTarget(BEFORE), readsByTarget(AFTER))).toEqual({ primary: 3, replicas: 147 });
  });

  it('counts nothing between two equal scrapes', () => {
    expect(readsBetween(readsByTarget(BEFORE), readsByTarget(BEFORE))).toEqual({ primary: 0, replicas: 0 });
  });

  it("answers the replicas' share, and null when nothing was read", () => {
    expect([
      replicaShare({ primary: 1, replicas: 3 }),
      replicaShare({ primary: 0, replicas: 5 }),
      replicaShare({ primary: 5, replicas: 0 }),
      replicaShare({ primary: 0, replicas: 0 }),
    ]).toEqual([0.75, 1, 0, null]);
  });
});
