import { describe, expect, it } from 'vitest';
import { combineRuns, type LoadResult } from '../../bench/loadResult.ts';

const run = (perSecond: number, p50: number, p99: number, failures = 0): LoadResult => ({ requests: perSecond * 5, perSecond, p50, p99, failures });

describe('Bench load results: interleaved runs as one figure', () => {
  it('takes the mean rate, the median latencies, and every request and failure', () => {
    expect(combineRuns([run(100, 10, 90), run(300, 30, 70, 2), run(200, 20, 500, 1)])).toEqual({
      requests: 3000,
      perSecond: 200,
      p50: 20,
      p99: 90,
      failures: 3,
    });
  });

  it('answers a single run as it is', () => {
    expect(combineRuns([run(100, 10, 90, 4)])).toEqual(run(100, 10, 90, 4));
  });

  it('takes the upper median of an even number of runs', () => {
    expect(combineRuns([run(100, 10, 90), run(300, 30, 70)])).toMatchObject({ perSecond: 200, p50: 30, p99: 90 });
  });
});
