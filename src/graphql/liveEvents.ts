/**
 * One subscription to a conversation's events: an async iterator fed by the
 * hub, yielding each notice as this subscriber sees it, in the order the hub
 * delivers them (commit order; see src/realtime/liveSequence.ts).
 *
 * Every notice re-checks membership; a subscriber who is no longer a member
 * gets one final `FORBIDDEN` and the stream ends. Each event runs like a
 * request of its own: before it is yielded, the subscription's context gets a
 * fresh runner, retention clock and loaders (sharing the notice's body loader
 * with the process's other subscribers), so nothing is read through an
 * earlier event's cache.
 */
import type { Config } from '../config.ts';
import { createRunner, type SqlClient } from '../db/runner.ts';
import { withTimeBudget } from '../db/timeBudget.ts';
import type { RequestContext, RequestStats } from './context.ts';
import { forbidden } from './errors.ts';
import { createLoaders } from './loaders.ts';
import type { ConversationEventModel } from './models.ts';
import { createEventBatch, type EventBatch } from '../store/eventViews.ts';
import type { Notice } from '../store/notify.ts';

/**
 * Where notices come from: the transport's hub (src/realtime/hub.ts), which
 * this layer knows only by this shape, so imports keep pointing down.
 */
export interface NoticeSource {
  /**
   * Calls `listener.notice` with every notice on `convId`, in commit order,
   * until the returned function is called; `listener.missed` when events of
   * `convId` were committed and never announced.
   */
  listen(convId: string, listener: { notice(notice: Notice): void; missed(reason: string): void }): () => void;
}

/** What a subscription yields: an event to resolve, or its end (the resolver throws `error`). */
/** `consistency`: the token of the event's commit (Notice.position), or null when the notice carried none. */
export type LiveItem = { kind: 'event'; event: ConversationEventModel; consistency: string | null } | { kind: 'end'; error: unknown };

/** The context of an operation over WebSocket: a request context plus the live events. */
export interface SubscriptionContext extends RequestContext {
  live: LiveEvents;
  /**
   * Closes this client's socket with a retryable code: it fell `behind` and
   * events were dropped, or events were `missed` (committed and never
   * announced). The client reconnects and fills the gap.
   */
  resync(reason: string, cause: 'behind' | 'missed'): void;
  /**
   * The consistency token of the event being resolved, set with its fresh
   * runner; on a server with read replicas the WebSocket server puts it in
   * the result's `extensions.consistency`, so a read with it sees what the
   * event announced.
   */
  liveConsistency?: string | null;
}

/** Whether `context` came from the WebSocket server (only there can a subscription run). */
export function isSubscriptionContext(context: RequestContext): context is SubscriptionContext {
  return 'live' in context;
}

/** The process's live events: opens subscriptions on its hub. */
export interface LiveEvents {
  /**
   * Starts delivering `convId`'s events as `viewerId` sees them, from now on.
   * Open it before checking membership, so nothing committed after the check
   * is missed; `return()` it if the check fails.
   */
  open(context: SubscriptionContext, convId: string, viewerId: string): AsyncIterableIterator<LiveItem>;
}

/** Events a subscriber may have waiting before it counts as too slow and is asked to reconnect. */
const MAX_BACKLOG = 1000;

const EVENT_KIND = {
  sent: 'MESSAGE_SENT',
  revoked: 'MESSAGE_REVOKED',
  edited: 'MESSAGE_EDITED',
  reacted: 'REACTIONS_CHANGED',
  pinned: 'MESSAGE_PINNED',
  unpinned: 'MESSAGE_UNPINNED',
  purged: 'MESSAGES_PURGED',
  read: 'READ_MOVED',
} as const;

/** Live events over `hub`, reading views through `client` under `config`'s retention. */
export function createLiveEvents(hub: NoticeSource, client: SqlClient, config: Config): LiveEvents {
  // Every subscriber of a notice in this process shares its batch.
  const batches = new WeakMap<Notice, EventBatch>();
  const batchOf = (notice: Notice): EventBatch => {
    let batch = batches.get(notice);
    if (batch === undefined) batches.set(notice, (batch = createEventBatch(client, config.retention, notice)));
    return batch;
  };
  return {
    open: (context, convId, viewerId) => new ConversationEventStream(hub, batchOf, client, context, convId, viewerId),
  };
}

class ConversationEventStream implements AsyncIterableIterator<LiveItem> {
  /** Settled results, in order, not yet taken by `next`. */
  private readonly ready: { item: LiveItem; batch: EventBatch }[] = [];
  private waiting: ((result: IteratorResult<LiveItem>) => void) | null = null;
  /** Views load concurrently; this chain hands them over in notice order. */
  private tail: Promise<void> = Promise.resolve();
  private backlog = 0;
  /** No more notices are taken (ended, returned, or too slow). */
  private stopped = false;
  /** Nothing more is delivered: the end was, or the consumer returned. */
  private finished = false;
  private readonly unlisten: () => void;

  constructor(
    hub: NoticeSource,
    private readonly batchOf: (notice: Notice) => EventBatch,
    private readonly client: SqlClient,
    private readonly context: SubscriptionContext,
    convId: string,
    private readonly viewerId: string,
  ) {
    this.unlisten = hub.listen(convId, { notice: (notice) => this.receive(notice), missed: () => this.missed() });
  }

  /** The hub logged why; the client is told what to do. */
  private missed(): void {
    if (this.stopped) return;
    this.stop();
    this.context.resync('Live events of a conversation were missed; reconnect and fill the gap.', 'missed');
  }

  private receive(notice: Notice): void {
    if (this.stopped) return;
    if (notice.kind === 'read' && notice.userId === this.viewerId) return;
    if (notice.kind === 'member' && notice.userId !== this.viewerId) return;
    if (++this.backlog > MAX_BACKLOG) {
      this.stop();
      this.context.resync(`More than ${MAX_BACKLOG} events waited for this connection; reconnect and fill the gap.`, 'behind');
      return;
    }
    const batch = this.batchOf(notice);
    // Started now, in the hub's dispatch, so every subscriber's load joins one batch.
    const pending = this.itemOf(notice, batch);
    this.tail = this.tail.then(async () => {
      const item = await pending;
      if (item === null) this.backlog -= 1;
      else this.deliver(item, batch);
    });
  }

  private async itemOf(notice: Notice, batch: EventBatch): Promise<LiveItem | null> {
    try {
      const view = await batch.view.load(this.viewerId);
      if (view.kind === 'not-found') return { kind: 'end', error: forbidden('You are no longer a member of this conversation; its events have stopped.') };
      if (notice.kind === 'member') return null;
      // Nothing about messages below the subscriber's floor, as on every read path.
      if (notice.kind !== 'read' && notice.toSeq <= view.floorSeq) return null;
      const event: ConversationEventModel = {
        kind: EVENT_KIND[notice.kind],
        convId: notice.convId,
        seq: notice.seq,
        toSeq: notice.toSeq,
        message: view.message,
        userId: notice.kind === 'read' ? notice.userId : null,
      };
      return { kind: 'event', event, consistency: notice.position ?? null };
    } catch (error) {
      return { kind: 'end', error };
    }
  }

  private deliver(item: LiveItem, batch: EventBatch): void {
    if (this.finished) return;
    if (item.kind === 'end') {
      this.finished = true;
      this.stop();
    }
    if (this.waiting !== null) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(this.take({ item, batch }));
    } else {
      this.ready.push({ item, batch });
    }
  }

  /** Readies the context for `entry`'s event: a fresh request's worth of runner, clock and loaders. */
  private take(entry: { item: LiveItem; batch: EventBatch }): IteratorResult<LiveItem> {
    this.backlog -= 1;
    if (entry.item.kind === 'event') {
      const stats: RequestStats = { statements: 0, texts: [], batches: [] };
      const db = withTimeBudget(createRunner(this.client, stats), this.context.config.requestDatabaseTimeMs);
      const { retention, body } = entry.batch;
      const loaders = createLoaders(db, this.viewerId, retention, stats.batches, { body });
      Object.assign(this.context, { db, stats, retention, loaders, liveConsistency: entry.item.consistency });
    } else {
      // An end reports no event: it carries no earlier event's token.
      this.context.liveConsistency = null;
    }
    return { value: entry.item, done: false };
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unlisten();
  }

  next(): Promise<IteratorResult<LiveItem>> {
    const entry = this.ready.shift();
    if (entry !== undefined) return Promise.resolve(this.take(entry));
    if (this.stopped) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<LiveItem>> {
    this.finished = true;
    this.stop();
    this.ready.length = 0;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<LiveItem>> {
    void this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<LiveItem> {
    return this;
  }
}
