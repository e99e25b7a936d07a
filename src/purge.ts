/**
 * One whole purge pass, as `backscroll purge` and the server's schedule run
 * it: expired messages (src/store/purge.ts), then change-feed entries older
 * than the feed's window. Logs one line per conversation and a summary.
 */
import type { Config } from './config.ts';
import type { SqlRunner } from './db/runner.ts';
import { MS_PER_DAY } from './history/retention.ts';
import type { Logger } from './log.ts';
import { pruneChanges } from './store/changes.ts';
import { type ConversationPurge, purgeExpired } from './store/purge.ts';

/**
 * Rows per transaction. Each batch holds its row locks for a few
 * milliseconds; larger batches purge faster but make concurrent page reads
 * wait longer for the CPU and the disk. See the purge row of `npm run bench`.
 */
const PURGE_BATCH_SIZE = 1000;
/**
 * Rest after each batch, as a multiple of the time it took: at 4 the purge
 * works a fifth of the time. At full speed it deletes far more than it needs
 * to (100,000 to 150,000 messages/s on the benchmark's 2 cores) and costs
 * concurrent page reads 30 to 40% of their rate; at 4 it deletes 25,000 to
 * 40,000 messages/s there and page reads keep their rate within the noise.
 */
const PURGE_REST_RATIO = 4;

/** What one pass did. */
export interface PurgeSummary {
  conversations: number;
  messages: number;
  hides: number;
  changesPruned: number;
  seconds: number;
  /** The pass was stopped (shutdown) before it finished; the next one carries on. */
  stopped: boolean;
}

export interface PurgePassOptions {
  batchSize?: number;
  restRatio?: number;
  /** The instant retention is judged at; now unless a test says otherwise. */
  now?: Date;
  onConversation?(report: ConversationPurge): void;
  onBatch?(deletedSoFar: number): void;
  signal?: AbortSignal;
}

/** Runs one pass with the server's retention limits and feed window from `config`. */
export async function runPurgePass(
  db: SqlRunner,
  config: Pick<Config, 'retention' | 'changeFeedDays'>,
  logger: Logger,
  options: PurgePassOptions = {},
): Promise<PurgeSummary> {
  const started = performance.now();
  const now = options.now ?? new Date();
  const batchSize = options.batchSize ?? PURGE_BATCH_SIZE;
  const totals = await purgeExpired(
    db,
    { server: config.retention, now },
    {
      batchSize,
      restRatio: options.restRatio ?? PURGE_REST_RATIO,
      signal: options.signal,
      onBatch: options.onBatch,
      onConversation: (report) => {
        logger.info(
          { conversation: report.convId, messages: report.messages, hides: report.hides, throughSeq: report.throughSeq },
          'purged expired messages',
        );
        options.onConversation?.(report);
      },
    },
  );
  const stopped = options.signal?.aborted ?? false;
  const changesPruned = stopped ? 0 : await pruneChanges(db, new Date(now.getTime() - config.changeFeedDays * MS_PER_DAY), batchSize);
  const summary: PurgeSummary = { ...totals, changesPruned, seconds: (performance.now() - started) / 1000, stopped };
  logger.info(summary, stopped ? 'purge stopped before finishing' : 'purge finished');
  return summary;
}
