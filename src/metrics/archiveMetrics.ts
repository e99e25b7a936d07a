/**
 * The cold archive's metrics (issue 16): what the archive holds, read from
 * `archive_segments` when scraped, and what this process's segment reader
 * did, reported to it as an `ArchiveReadObserver` (the archive layer never
 * imports the metrics; the server joins the two).
 *
 * The totals are one aggregate statement per scrape rather than counters
 * kept by the archiver: segments are written by whichever process archives,
 * and dropped or rewritten by retention and erasure, so only the table knows
 * the sum. It reads every segment's row (about 1,000 messages each: a
 * million rows at a billion archived messages), which a scrape every few
 * seconds can afford.
 */
import { sql } from 'drizzle-orm';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ARCHIVE_PROBLEMS, type ArchiveReadObserver } from '../archive/reader.ts';
import type { SqlRunner } from '../db/runner.ts';
import { archiveSegments } from '../db/schema.ts';

/** What the archive holds, over every conversation. */
export interface ArchiveTotals {
  segments: number;
  messages: number;
  bytes: number;
}

/** The totals of `archive_segments`, in one statement. */
export async function readArchiveTotals(db: SqlRunner): Promise<ArchiveTotals> {
  const s = archiveSegments;
  const [row] = await db.rows<{ segments: string | number; messages: string | number; bytes: string | number }>(
    sql`select count(*) as segments, coalesce(sum(${s.count}), 0) as messages, coalesce(sum(${s.bytes}), 0) as bytes from ${s}`,
  );
  return { segments: Number(row?.segments ?? 0), messages: Number(row?.messages ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/**
 * How long a scrape waits for the totals. The statement needs a pooled
 * connection, and a scrape must answer most when the pool is exhausted: past
 * this, the gauges show the last totals read, and the statement's answer
 * (still on its way) is there for the next scrape.
 */
const TOTALS_WAIT_MS = 1000;

/**
 * The totals as last read, refreshed by `refresh`: one statement at a time,
 * shared by the callers that ask while it runs (the three gauges of one
 * scrape), so a stuck pool holds at most one of them.
 */
function latestTotals(read: () => Promise<ArchiveTotals>): { refresh(): Promise<void>; latest(): ArchiveTotals | null } {
  let latest: ArchiveTotals | null = null;
  let pending: Promise<void> | null = null;
  return {
    refresh() {
      pending ??= read().then(
        (totals) => {
          latest = totals;
        },
        // A failed read (the database down) leaves the last totals; the pool gauges and /readyz say why.
        () => {},
      ).finally(() => {
        pending = null;
      });
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, TOTALS_WAIT_MS);
      });
      return Promise.race([pending, waited]).finally(() => clearTimeout(timer));
    },
    latest: () => latest,
  };
}

/**
 * Registers the archive's metrics in `register` and returns the observer
 * that feeds its counters. `totals` is read when scraped, waited for at most
 * TOTALS_WAIT_MS; absent, the gauges stay 0. When it fails or is late, the
 * gauges keep the last totals read and the scrape still answers.
 */
export function registerArchiveMetrics(register: Registry, totals?: () => Promise<ArchiveTotals>): ArchiveReadObserver {
  const held = totals && latestTotals(totals);
  const gauge = (name: string, help: string, pick: (t: ArchiveTotals) => number) =>
    new Gauge({
      name,
      help,
      registers: [register],
      // Every worker reads the same table at the same scrape: one value, not one per worker (max, so a worker whose read failed does not lower it).
      aggregator: 'max',
      async collect() {
        if (held === undefined) return;
        await held.refresh();
        const latest = held.latest();
        if (latest !== null) this.set(pick(latest));
      },
    });
  gauge('backscroll_archive_segments', 'Archive segments recorded in archive_segments.', (t) => t.segments);
  gauge('backscroll_archive_messages', 'Message bodies held in archive segments (and no longer in message_bodies).', (t) => t.messages);
  gauge('backscroll_archive_bytes', 'Bytes of the archive segments in their store (compressed).', (t) => t.bytes);
  const fetches = new Counter({
    name: 'backscroll_archive_cold_fetches_total',
    help: 'Fetches of a segment from the archive store by this process (a cache miss with no fetch of it already under way), counted when they end, whatever the outcome.',
    registers: [register],
  });
  const fetchDuration = new Histogram({
    name: 'backscroll_archive_cold_fetch_duration_seconds',
    help: 'How long a fetch from the archive store took, with decoding and checks, whatever the outcome (it goes on past ARCHIVE_READ_TIMEOUT_MS, into the cache).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2.5, 5, 10, 30],
    registers: [register],
  });
  const hits = new Counter({
    name: 'backscroll_archive_cache_hits_total',
    help: 'Reads of an archived segment answered from the cache of decoded segments; the hit ratio is hits / (hits + misses).',
    registers: [register],
  });
  const misses = new Counter({
    name: 'backscroll_archive_cache_misses_total',
    help: 'Reads of an archived segment that waited for a fetch from the store (their own, or one under way).',
    registers: [register],
  });
  const unreadable = new Counter({
    name: 'backscroll_archive_unreadable_segments_total',
    help: 'Reads of an archived segment that went without it, by problem: missing, corrupt, unreachable, timeout (past ARCHIVE_READ_TIMEOUT_MS), not-configured.',
    labelNames: ['problem'],
    registers: [register],
  });
  // Every problem shows from the start, so a rate or an alert has a series before the first failure.
  for (const problem of ARCHIVE_PROBLEMS) unreadable.inc({ problem }, 0);
  return {
    cacheHit: () => hits.inc(),
    cacheMiss: () => misses.inc(),
    fetched(seconds) {
      fetches.inc();
      fetchDuration.observe(seconds);
    },
    unreadable: (problem) => unreadable.inc({ problem }),
  };
}
