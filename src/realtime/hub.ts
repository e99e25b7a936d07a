/**
 * The listener and dispatcher: one LISTEN on `EVENTS_CHANNEL` per server
 * process, and an in-memory fan-out of each notice to the subscriptions open
 * on its conversation in this process, in commit order (liveSequence.ts).
 *
 * NOTIFY is fire-and-forget, and live events are published after their
 * write commits (src/store/notify.ts), so a notice can be lost two ways, and
 * the hub notices both:
 *
 * - The LISTEN connection was down (postgres.js listened again after a
 *   reconnect, or the hub's own probe found it dead and listened again):
 *   every subscriber of this process may have missed something (`onGap`).
 * - A process died (or failed to publish) between a commit and its
 *   publication. Every second the hub asks the database, in one statement
 *   for all the conversations it has subscribers on, where they stand
 *   (newest seq, revokes and purges recorded); what the database showed must
 *   have been delivered within a grace period, or that conversation's
 *   subscribers are told they missed events (`NoticeListener.missed`).
 *
 * Either way the WebSocket server closes the sockets with a retryable code:
 * clients reconnect and fill what they missed from the history, which is
 * never lost.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { createRunner, type SqlClient } from '../db/runner.ts';
import type { Logger } from '../log.ts';
import { readLiveHeads } from '../store/liveHeads.ts';
import { EVENTS_CHANNEL, type Notice, parsePayload, pingPayload } from '../store/notify.ts';
import { LiveSequence } from './liveSequence.ts';

/** Receives the notices of one conversation. */
interface NoticeListener {
  /** A notice, in commit order (see liveSequence.ts). */
  notice(notice: Notice): void;
  /** Events of this conversation were committed and never announced; the subscriber must catch up. */
  missed(reason: string): void;
}

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
/** How often the hub asks the database where its conversations stand. */
const AUDIT_INTERVAL_MS = 1000;
/**
 * How long a committed event may take to be delivered before its
 * subscribers are told they missed it. Publication takes milliseconds; the
 * margin is for a busy process (event-loop delays), where a false alarm
 * would reconnect every subscriber of the conversation for nothing.
 */
const GRACE_MS = 1500;

/** One conversation with subscribers in this process. */
interface Conversation {
  listeners: Set<NoticeListener>;
  /** Replaced (not reset) after missed events, so an audit answer read for the old one is not applied to the new. */
  sequence: LiveSequence;
}

interface Subscription {
  unlisten(): Promise<void>;
}

/** Starts listening on `client`. On PostgreSQL a failed first LISTEN is retried by the probe, so a server can start while the database is down. */
export async function startEventHub(client: SqlClient, logger: Logger): Promise<EventHub> {
  const byConversation = new Map<string, Conversation>();
  const gapListeners: ((reason: string) => void)[] = [];
  let listenerCount = 0;
  const nonce = randomUUID();
  let closed = false;
  const db = createRunner(client);

  /** Tells `conversation`'s listeners, guarding the hub against a listener that throws. */
  const tell = (conversation: Conversation, call: (listener: NoticeListener) => void) => {
    for (const listener of [...conversation.listeners]) {
      try {
        call(listener);
      } catch (error) {
        logger.error({ err: error }, 'a live event listener failed');
      }
    }
  };
  const deliver = (conversation: Conversation, notices: readonly Notice[]) => {
    for (const notice of notices) tell(conversation, (listener) => listener.notice(notice));
  };

  const gap = (reason: string) => {
    logger.warn({ reason }, 'live events may have been missed; asking WebSocket clients to reconnect');
    // Whoever subscribes from now on starts from where the database stands then.
    for (const conversation of byConversation.values()) conversation.sequence = new LiveSequence();
    startSoon();
    for (const listener of gapListeners) listener(reason);
  };

  const missed = (convId: string, conversation: Conversation, reason: string) => {
    logger.warn({ convId, reason }, 'live events of a conversation were missed; asking its subscribers to reconnect');
    conversation.sequence = new LiveSequence();
    tell(conversation, (listener) => listener.missed(reason));
    if (byConversation.get(convId) === conversation) startSoon();
  };

  /**
   * Asks the database where conversations stand: those not started yet
   * (`all` false), or every one (the periodic audit). An answer is applied
   * only to the sequence it was asked for.
   */
  const readHeads = async (all: boolean) => {
    const asked = [...byConversation]
      .filter(([, conversation]) => all || !conversation.sequence.started)
      .map(([convId, conversation]) => ({ convId, conversation, sequence: conversation.sequence }));
    if (asked.length === 0) return;
    const heads = await readLiveHeads(db, asked.map((a) => ({ convId: a.convId, afterChangeSeq: a.sequence.afterChangeSeq })));
    const now = Date.now();
    const byId = new Map(heads.map((head) => [head.convId, head]));
    for (const { convId, conversation, sequence } of asked) {
      if (closed || conversation.sequence !== sequence || byConversation.get(convId) !== conversation) continue;
      deliver(conversation, sequence.observe(byId.get(convId) ?? null, now));
    }
  };

  // New conversations are started together, soon after their first listener.
  let startTimer: NodeJS.Timeout | null = null;
  const startSoon = () => {
    if (startTimer !== null || closed) return;
    startTimer = setTimeout(() => {
      startTimer = null;
      void readHeads(false).catch((error: unknown) => {
        logger.warn({ err: error }, 'could not read where live conversations stand; trying again shortly');
      });
    }, 0);
  };

  let auditing = false;
  let lastTick = Date.now();
  const audit = async () => {
    const now = Date.now();
    // A late tick means the process was busy: notices may be waiting unread
    // in its socket, so this audit judges nothing (the next one will).
    const late = now - lastTick > AUDIT_INTERVAL_MS + GRACE_MS / 2;
    lastTick = now;
    if (auditing) return;
    auditing = true;
    try {
      for (const [convId, conversation] of late ? [] : [...byConversation]) {
        const reason = conversation.sequence.audit(now, GRACE_MS);
        if (reason !== null) missed(convId, conversation, reason);
      }
      await readHeads(true);
    } catch {
      // The database is down: the LISTEN probe reports the gap once it is back.
    } finally {
      auditing = false;
    }
  };
  // In the check phase, after the poll phase has read the notices that arrived meanwhile.
  const auditTimer = setInterval(() => setImmediate(() => void audit()), AUDIT_INTERVAL_MS);
  auditTimer.unref();

  // Probes are numbered: the probe sent last must have come back by the next one.
  let probesSent = 0;
  let probeExpected = 0;
  let probeSeen = 0;

  const dispatch = (payload: string) => {
    if (closed) return;
    const parsed = parsePayload(payload);
    if (parsed === null) {
      logger.warn({ payload: payload.slice(0, 200) }, 'ignored a notification that is not a live event');
      return;
    }
    if (!Array.isArray(parsed)) {
      const [from, n] = parsed.nonce.split('/');
      if (from === nonce) probeSeen = Math.max(probeSeen, Number(n));
      return;
    }
    for (const notice of parsed) {
      const conversation = byConversation.get(notice.convId);
      if (conversation !== undefined) deliver(conversation, conversation.sequence.receive(notice));
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
        await db.rows(sql`select pg_notify(${EVENTS_CHANNEL}, ${pingPayload(`${nonce}/${n}`)})`);
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
      let conversation = byConversation.get(key);
      if (conversation === undefined) {
        byConversation.set(key, (conversation = { listeners: new Set(), sequence: new LiveSequence() }));
        startSoon();
      }
      const { listeners } = conversation;
      if (!listeners.has(listener)) listenerCount += 1;
      listeners.add(listener);
      const mine = conversation;
      return () => {
        if (listeners.delete(listener)) listenerCount -= 1;
        if (listeners.size === 0 && byConversation.get(key) === mine) byConversation.delete(key);
      };
    },
    listenerCount: () => listenerCount,
    onGap(onGap) {
      gapListeners.push(onGap);
    },
    async close() {
      closed = true;
      clearInterval(auditTimer);
      if (startTimer !== null) clearTimeout(startTimer);
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
