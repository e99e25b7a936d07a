/**
 * Where a server's reads went, from its `/metrics` text: the
 * `backscroll_db_reads_total` counter by target (`primary`, `replica0`...),
 * and what two scrapes say happened between them. Pure, so it is tested
 * without a server.
 */

/** Reads counted between two scrapes: on the primary, on all replicas together. */
export interface ReadsServed {
  primary: number;
  replicas: number;
}

const READS_LINE = /^backscroll_db_reads_total\{target="([^"]+)"\} (\S+)$/;

/** Each target's `backscroll_db_reads_total` in `metricsText` (none: an empty object, as on a server without replicas). */
export function readsByTarget(metricsText: string): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of metricsText.split('\n')) {
    const match = READS_LINE.exec(line.trim());
    if (match) totals[match[1]!] = Number(match[2]);
  }
  return totals;
}

/** The reads served between the scrapes `before` and `after`, by the primary and by the replicas (a target missing from a scrape counts 0). */
export function readsBetween(before: Record<string, number>, after: Record<string, number>): ReadsServed {
  const served: ReadsServed = { primary: 0, replicas: 0 };
  for (const [target, total] of Object.entries(after)) {
    const delta = total - (before[target] ?? 0);
    if (target === 'primary') served.primary += delta;
    else served.replicas += delta;
  }
  return served;
}

/** The share of `served` the replicas served, 0 to 1; null when nothing was read. */
export function replicaShare(served: ReadsServed): number | null {
  const total = served.primary + served.replicas;
  return total === 0 ? null : served.replicas / total;
}
