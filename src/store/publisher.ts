/**
 * A server process's publisher of live events: writes hand it their notices
 * after they commit, and it announces them on the channel in batches, one
 * `pg_notify` statement (a commit of its own, outside every write's
 * transaction) per batch.
 *
 * The first notice of a batch waits `COALESCE_MS` for others, and only one
 * batch is in flight at a time, so under load a batch carries whatever
 * committed while the previous one was being published: a few notifying
 * commits per second per process instead of one per write.
 *
 * Publication is at most once: a batch that fails is logged and not sent
 * again. Nothing is lost for subscribers all the same, because every hub
 * audits what it was told against the database (src/realtime/hub.ts) and
 * asks the subscribers of a conversation that fell behind to reconnect and
 * catch up, whether the notice was lost here or with a process that died
 * between a commit and its publication.
 */
import { createRunner, type SqlClient } from '../db/runner.ts';
import type { Logger } from '../log.ts';
import { type Notice, type Publisher, publishNow } from './notify.ts';

/**
 * How long the first notice of a batch waits for others: long enough that a
 * busy process sends a statement for several writes (each costs Node and
 * PostgreSQL about what a small read does), short enough not to be seen.
 */
const COALESCE_MS = 5;

/** A process's publisher; `close` publishes what is waiting. */
export interface NoticePublisher extends Publisher {
  /** Publishes what is waiting, then takes no more. */
  close(): Promise<void>;
}

/** Faults a test asks for; never set in production. */
interface PublisherFaults {
  /**
   * Test only (`BACKSCROLL_FAULT=die-before-publish`, read by server.ts): the
   * process kills itself (SIGKILL) when a batch is about to be published, so
   * its writes are committed and never announced.
   */
  dieBeforePublish?: boolean;
}

/** A publisher sending through `client`'s pool; failures go to `logger`. */
export function createPublisher(client: SqlClient, logger: Logger, faults: PublisherFaults = {}): NoticePublisher {
  const db = createRunner(client);
  let waiting: Notice[] = [];
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let closed = false;

  const flush = (): Promise<void> => {
    timer = null;
    const batch = waiting;
    waiting = [];
    if (faults.dieBeforePublish) process.kill(process.pid, 'SIGKILL');
    inFlight = publishNow(db, batch)
      .catch((error: unknown) => {
        logger.warn({ err: error, notices: batch.length }, 'live events could not be published; subscribers will be asked to catch up');
      })
      .finally(() => {
        inFlight = null;
        if (waiting.length > 0 && timer === null) timer = setTimeout(flush, COALESCE_MS);
      });
    return inFlight;
  };

  return {
    publish(notices) {
      if (closed || notices.length === 0) return;
      waiting.push(...notices);
      if (timer === null && inFlight === null) timer = setTimeout(flush, COALESCE_MS);
    },
    async close() {
      closed = true;
      while (inFlight !== null || waiting.length > 0) {
        if (inFlight !== null) await inFlight;
        else {
          if (timer !== null) clearTimeout(timer);
          await flush();
        }
      }
      if (timer !== null) clearTimeout(timer);
    },
  };
}
