/** What a load process prints: one JSON line the orchestrator reads. */
export interface LoadResult {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** Responses that were not 2xx, or carried GraphQL `errors`. */
  failures: number;
}

/** The q-quantile (0..1) of `sorted` latencies in ms. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Runs interleaved with others as one figure: their mean rate, the median of their latencies, all their requests and failures. */
export function combineRuns(runs: LoadResult[]): LoadResult {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return {
    requests: runs.reduce((sum, r) => sum + r.requests, 0),
    perSecond: runs.reduce((sum, r) => sum + r.perSecond, 0) / runs.length,
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    failures: runs.reduce((sum, r) => sum + r.failures, 0),
  };
}
