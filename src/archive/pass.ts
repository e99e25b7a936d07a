/**
 * One archiver run as `backscroll archive` and the server's schedule
 * (ARCHIVE_INTERVAL_SECONDS) run it: first the segments are brought in line
 * with what retention, purges and erasures left (rewrite.ts), then bodies
 * are archived with the server's settings, or one run's overrides, into the
 * configured store, logged. The archiver's cleanup of unrecorded objects
 * (at its start) deletes the objects of segments whose records a purge or
 * an erasure removed.
 */
import type { ArchiveSettings } from '../config.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { Logger } from '../log.ts';
import { type ArchiveOptions, archiveBodies, type ArchiveSummary, removeOrphans } from './archiver.ts';
import { type ReconcileOptions, reconcileSegments, type ReconcileSummary } from './rewrite.ts';
import type { SegmentStore } from './segmentStore.ts';

const MS_PER_DAY = 86_400_000;

/** What one run is asked to do: the settings' age and newest kept, unless overridden. */
export interface ArchivePassOptions
  extends Pick<ArchiveOptions, 'signal' | 'restRatio' | 'onSegment' | 'onConversation' | 'onSkipped' | 'onOrphans'>,
    Pick<ReconcileOptions, 'onDropped' | 'onRewritten'> {
  /** Archive messages older than this, instead of ARCHIVE_AFTER_DAYS. */
  olderThanMs?: number;
  /** Keep each conversation's newest this many, instead of ARCHIVE_KEEP_NEWEST. */
  keepNewest?: number;
  now?: Date;
}

/** The age a run archives from, in milliseconds: the override, else ARCHIVE_AFTER_DAYS; null: archiving is off. */
export function archiveAgeMs(settings: Pick<ArchiveSettings, 'afterDays'>, options: Pick<ArchivePassOptions, 'olderThanMs'>): number | null {
  if (options.olderThanMs !== undefined) return options.olderThanMs;
  return settings.afterDays === null ? null : settings.afterDays * MS_PER_DAY;
}

/** What one run did: the archiver's summary, and the segments' reconciliation before it. */
export interface ArchivePassSummary extends ArchiveSummary {
  reconciled: ReconcileSummary;
}

/** Runs the archiver once; null when archiving is off (no ARCHIVE_AFTER_DAYS and no override). */
export async function runArchivePass(
  db: SqlRunner,
  store: SegmentStore,
  settings: Pick<ArchiveSettings, 'afterDays' | 'keepNewest' | 'restRatio'>,
  logger: Logger,
  options: ArchivePassOptions = {},
): Promise<ArchivePassSummary | null> {
  const ageMs = archiveAgeMs(settings, options);
  if (ageMs === null) return null;
  const now = options.now ?? new Date();
  // Before archiving: an erasure's texts should not wait behind a long backlog.
  const reconciled = await reconcileLogged(db, store, logger, options);
  const archived = await archiveBodies(db, store, {
    before: new Date(now.getTime() - ageMs),
    keepNewest: options.keepNewest ?? settings.keepNewest,
    restRatio: options.restRatio ?? settings.restRatio,
    signal: options.signal,
    onSegment: options.onSegment,
    onConversation: (convId, totals) => {
      logger.info({ conversation: convId, ...totals }, 'archived message bodies');
      options.onConversation?.(convId, totals);
    },
    onSkipped: (convId, fromSeq, toSeq) => {
      logger.warn({ conversation: convId, fromSeq, toSeq }, 'archive segment skipped: its bodies changed while it was written');
      options.onSkipped?.(convId, fromSeq, toSeq);
    },
    onOrphans: (removed) => {
      logger.info({ removed, store: store.location }, 'removed archive objects that were never recorded');
      options.onOrphans?.(removed);
    },
  });
  const summary: ArchivePassSummary = { ...archived, stopped: archived.stopped || reconciled.stopped, reconciled };
  logger.info({ ...summary, store: store.location }, summary.stopped ? 'archive stopped before finishing' : 'archive finished');
  return summary;
}

/** `reconcileSegments` with each drop, rewrite and failure logged and passed on. */
function reconcileLogged(
  db: SqlRunner,
  store: SegmentStore,
  logger: Logger,
  options: Pick<ArchivePassOptions, 'signal' | 'onDropped' | 'onRewritten'>,
): Promise<ReconcileSummary> {
  return reconcileSegments(db, store, {
    signal: options.signal,
    onDropped: (segment) => {
      logger.info({ conversation: segment.convId, fromSeq: segment.fromSeq, toSeq: segment.toSeq, key: segment.key }, 'deleted an archive segment with no live message');
      options.onDropped?.(segment);
    },
    onRewritten: (before, after) => {
      logger.info(
        { conversation: before.convId, before: { fromSeq: before.fromSeq, toSeq: before.toSeq, count: before.count }, after: { fromSeq: after.fromSeq, toSeq: after.toSeq, count: after.count } },
        'rewrote an archive segment without its purged, revoked or erased texts',
      );
      options.onRewritten?.(before, after);
    },
    onFailed: (segment, problem) => logger.error({ conversation: segment.convId, key: segment.key, problem }, 'archive segment not rewritten: its object cannot be read'),
  });
}

/**
 * What archiving switched off still owes the segments written before: they
 * follow purges, retention and erasure (reconciled, and objects no record
 * names removed), and nothing new is archived.
 */
export async function tidyArchive(
  db: SqlRunner,
  store: SegmentStore,
  logger: Logger,
  options: Pick<ArchivePassOptions, 'signal' | 'onDropped' | 'onRewritten' | 'onOrphans'> = {},
): Promise<{ reconciled: ReconcileSummary; orphansRemoved: number }> {
  const reconciled = await reconcileLogged(db, store, logger, options);
  const orphansRemoved = await removeOrphans(db, store);
  if (orphansRemoved > 0) options.onOrphans?.(orphansRemoved);
  return { reconciled, orphansRemoved };
}
