/**
 * The listener and dispatcher: one LISTEN on `EVENTS_CHANNEL` per server
 * process, and an in-memory fan-out of each notice to the subscriptions open
 * on its conversation in this process.
 *
 * NOTIFY is fire-and-forget: a notice sent while the LISTEN connection is
 * down is lost. So the hub reports a gap whenever that may have happened
 * (postgres.js listened again after a reconnect, or the hub's own probe
 * found the LISTEN dead and listened again), and the WebSocket server closes
 * every socket with a retryable code: clients reconnect and fill what they
 * missed from the history, which is never lost.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { createRunner, type SqlClient } from '../db/runner.ts';
import type { Logger } from '../log.ts';
import { EVENTS_CHANNEL, type Notice, parseNotice, pingPayload } from '../store/notify.ts';

/** Receives the notices of one conversation. */
type NoticeListener = (notice: Notice) => void;

/** The process's fan-out of notices. */
export interface EventHub {
  /** Calls `listener` with every notice on `convId` until the returned function is called. */
  listen(convId: string, listener: NoticeListener): () => void;
  /** Listeners registered now: one per open subscription (the metrics' subscription gauge). */
  listenerCount(): number;
  /** Calls `onGap` whenever notices may have been lost since the last one arrived. */
  onGap(onGap: (reason: string) => void): void;
  /** Stops listening. */
  close(): Promise<void>;
}

/** How often the hub probes its own LISTEN connection on PostgreSQL; a dead one is replaced within two periods. */
const PROBE_INTERVAL_MS = 5000;
/** How long `close` waits for UNLISTEN (the database may be down). */
const UNLISTEN_WAIT_MS = 1000;

interface Subscription {
  unlisten(): Promise<void>;
}

/** Starts listening on `client`. On PostgreSQL a failed first LISTEN is retried by the probe, so a server can start while the database is down. */
export async function startEventHub(client: SqlClient, logger: Logger): Promise<EventHub> {
  const byConversation = new Map<string, Set<NoticeListener>>();
  const gapListeners: ((reason: string) => void)[] = [];
  let listenerCount = 0;
  const nonce = randomUUID();
  let closed = false;

  const gap = (reason: string) => {
    logger.warn({ reason }, 'live events may have been missed; asking WebSocket clients to reconnect');
    for (const listener of gapListeners) listener(reason);
  };

  // Probes are numbered: the probe sent last must have come back by the next one.
  let probesSent = 0;
  let probeExpected = 0;
  let probeSeen = 0;

  const dispatch = (payload: string) => {
    if (closed) return;
    const notice = parseNotice(payload);
    if (notice === null) {
      logger.warn({ payload: payload.slice(0, 200) }, 'ignored a notification that is not a live event');
      return;
    }
    if (notice.kind === 'ping') {
      const [from, n] = notice.nonce.split('/');
      if (from === nonce) probeSeen = Math.max(probeSeen, Number(n));
      return;
    }
    const listeners = byConversation.get(notice.convId);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      try {
        listener(notice);
      } catch (error) {
        logger.error({ err: error }, 'a live event listener failed');
      }
    }
  };

  let subscription: Subscription | null = null;
  let probeTimer: NodeJS.Timeout | null = null;

  if (client.kind === 'pglite') {
    // In-process: PGlite delivers every notification of its only session.
    const unlisten = await client.pglite.listen(EVENTS_CHANNEL, dispatch);
    subscription = { unlisten: () => unlisten() };
  } else {
    // Each LISTEN registration has its own generation; notices reaching an
    // older one (postgres.js may re-register it after we replaced it) are dropped.
    let generation = 0;
    const probes = createRunner(client);
    const listen = async (): Promise<boolean> => {
      const mine = ++generation;
      let listenedBefore = false;
      try {
        const registration = await client.sql.listen(
          EVENTS_CHANNEL,
          (payload) => mine === generation && dispatch(payload),
          () => {
            // Called again after postgres.js reconnected on its own.
            if (listenedBefore && mine === generation) gap('the LISTEN connection was re-established');
            listenedBefore = true;
          },
        );
        if (mine !== generation || closed) {
          void registration.unlisten().catch(() => undefined);
          return false;
        }
        subscription = registration;
        return true;
      } catch (error) {
        logger.warn({ err: error }, 'could not LISTEN for live events; trying again shortly');
        return false;
      }
    };
    const probe = async () => {
      if (subscription === null) {
        if (await listen()) gap('listening again after the LISTEN connection failed');
        return;
      }
      if (probeSeen < probeExpected) {
        const dead = subscription;
        subscription = null;
        probeExpected = 0;
        probeSeen = 0;
        void dead.unlisten().catch(() => undefined);
        if (await listen()) gap('the LISTEN connection stopped delivering');
        return;
      }
      const n = ++probesSent;
      try {
        await probes.rows(sql`select pg_notify(${EVENTS_CHANNEL}, ${pingPayload(`${nonce}/${n}`)})`);
        probeExpected = n;
      } catch {
        // The database is down: nothing to learn until it is back.
      }
    };
    const schedule = () => {
      probeTimer = setTimeout(() => {
        void probe().finally(() => !closed && schedule());
      }, PROBE_INTERVAL_MS);
      probeTimer.unref();
    };
    await listen();
    schedule();
  }

  return {
    listen(convId, listener) {
      const key = convId.toLowerCase();
      let listeners = byConversation.get(key);
      if (listeners === undefined) byConversation.set(key, (listeners = new Set()));
      if (!listeners.has(listener)) listenerCount += 1;
      listeners.add(listener);
      return () => {
        if (listeners.delete(listener)) listenerCount -= 1;
        if (listeners.size === 0 && byConversation.get(key) === listeners) byConversation.delete(key);
      };
    },
    listenerCount: () => listenerCount,
    onGap(onGap) {
      gapListeners.push(onGap);
    },
    async close() {
      closed = true;
      if (probeTimer !== null) clearTimeout(probeTimer);
      const last = subscription as Subscription | null;
      subscription = null;
      if (last === null) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        last.unlisten().catch(() => undefined),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, UNLISTEN_WAIT_MS))),
      ]);
      clearTimeout(timer);
    },
  };
}
