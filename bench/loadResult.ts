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
