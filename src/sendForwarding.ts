/**
 * Sends forwarded between cluster workers (src/store/routedSends.ts says
 * why): a worker hands a send to the primary, the primary to the worker
 * that owns the conversation, and the answer comes back the same way.
 * Workers cannot reach each other directly under node:cluster, so the
 * primary relays; it also knows when a worker dies, and then answers every
 * send it had relayed there as `lost`, so no sender waits on a dead owner
 * (the sender stores it itself; see routedSends.ts).
 *
 * A worker takes forwarded sends once it says so (`serve`), after its
 * server is up; until then, and once it stops, sends meant for it are
 * answered `undelivered` and stored by their sender.
 *
 * What one process has for another in one turn of its event loop goes as
 * one IPC message (a batch): the answers to the sends one statement stored
 * together, for one. Each IPC message costs a write, a read, a JSON parse
 * and a stringify on both sides, and the primary's share of that was about
 * a sixth of the server's CPU with every answer sent alone (issue 15's note).
 */
import cluster, { type Worker } from 'node:cluster';
import type { SqlClient } from './db/runner.ts';
import type { ForwardAnswer, SendForwarder } from './store/routedSends.ts';
import type { SendRequest } from './store/sends.ts';

const FORWARD = 'backscroll:send-forward';
const ANSWER = 'backscroll:send-answer';
const READY = 'backscroll:sends-ready';
const BATCH = 'backscroll:send-batch';

/** A send on its way: from a worker to the primary (`id` the sender's), then from the primary to the owner (`id` the primary's). */
interface Forward {
  type: typeof FORWARD;
  id: number;
  owner: number;
  convId: string;
  send: SendRequest;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  answer: ForwardAnswer;
}
interface Ready {
  type: typeof READY;
  slot: number;
}
/** Forwards and answers for one process, sent together. */
interface Batch {
  type: typeof BATCH;
  messages: (Forward | Answer)[];
}

const isForward = (message: unknown): message is Forward => (message as Forward | null)?.type === FORWARD;
const isAnswer = (message: unknown): message is Answer => (message as Answer | null)?.type === ANSWER;
const isReady = (message: unknown): message is Ready => (message as Ready | null)?.type === READY;
const isBatch = (message: unknown): message is Batch => (message as Batch | null)?.type === BATCH;

/** One process's outgoing forwards and answers, with what to do for each if its batch cannot be sent. */
type Outgoing = { messages: (Forward | Answer)[]; undelivered: (() => void)[] };

/** A worker as the relay sees it. */
export interface Peer {
  isConnected(): boolean;
  /** Sends `batch`; `undelivered` is called if it could not be. */
  send(batch: Batch, undelivered: () => void): void;
}

/** The primary's relay, apart from node:cluster: fed a worker's messages and its exit. */
export interface SendRelay {
  message(from: Peer, message: unknown): void;
  exited(peer: Peer): void;
}

export function createSendRelay(): SendRelay {
  /** The worker taking forwarded sends in each slot. */
  const owners = new Map<number, Peer>();
  /** Sends relayed to an owner and not yet answered, by the primary's id. */
  const relayed = new Map<number, { from: Peer; id: number; to: Peer }>();
  let next = 0;
  /** What one incoming batch makes the relay send, by worker: sent as one batch each once the incoming one is handled. */
  const outgoing = new Map<Peer, Outgoing>();
  const queue = (to: Peer, message: Forward | Answer, undelivered: () => void) => {
    let out = outgoing.get(to);
    if (out === undefined) outgoing.set(to, (out = { messages: [], undelivered: [] }));
    out.messages.push(message);
    out.undelivered.push(undelivered);
  };
  const reply = (to: Peer, id: number, answer: ForwardAnswer) => {
    // A sender that died meanwhile has no one left to answer.
    if (to.isConnected()) queue(to, { type: ANSWER, id, answer }, () => undefined);
  };
  const handle = (from: Peer, message: Forward | Answer) => {
    if (isForward(message)) {
      const to = owners.get(message.owner);
      if (to === undefined || !to.isConnected()) return reply(from, message.id, { kind: 'undelivered' });
      const relayId = next++;
      relayed.set(relayId, { from, id: message.id, to });
      queue(to, { ...message, id: relayId }, () => {
        if (relayed.delete(relayId)) reply(from, message.id, { kind: 'undelivered' });
      });
    } else {
      const entry = relayed.get(message.id);
      if (entry === undefined) return;
      relayed.delete(message.id);
      reply(entry.from, entry.id, message.answer);
    }
  };
  /** Sends what was queued, a batch per worker; a batch that cannot be sent queues its senders' answers, sent in turn. */
  const flush = () => {
    while (outgoing.size > 0) {
      const [to, out] = outgoing.entries().next().value!;
      outgoing.delete(to);
      to.send({ type: BATCH, messages: out.messages }, () => {
        out.undelivered.forEach((undelivered) => undelivered());
        flush();
      });
    }
  };
  return {
    message(from, message) {
      if (isReady(message)) owners.set(message.slot, from);
      else if (isBatch(message)) for (const inner of message.messages) if (isForward(inner) || isAnswer(inner)) handle(from, inner);
      flush();
    },
    exited(peer) {
      for (const [slot, owner] of owners) if (owner === peer) owners.delete(slot);
      for (const [relayId, entry] of relayed) {
        if (entry.to !== peer && entry.from !== peer) continue;
        relayed.delete(relayId);
        if (entry.to === peer) reply(entry.from, entry.id, { kind: 'lost' });
      }
      flush();
    },
  };
}

/** In the primary: relays sends between the workers. Call once. */
export function relaySends(): void {
  const relay = createSendRelay();
  const peers = new WeakMap<Worker, Peer>();
  const peerOf = (worker: Worker): Peer => {
    let peer = peers.get(worker);
    if (peer === undefined) {
      peer = {
        isConnected: () => worker.isConnected(),
        send: (batch, undelivered) => {
          try {
            worker.send(batch, (error: Error | null) => error && undelivered());
          } catch {
            undelivered();
          }
        },
      };
      peers.set(worker, peer);
    }
    return peer;
  };
  cluster.on('message', (worker, message) => relay.message(peerOf(worker), message));
  cluster.on('exit', (worker) => relay.exited(peerOf(worker)));
}

/** A worker's end: the forwarder its sends go through, and the way it takes other workers'. */
export interface SendForwarding {
  forwarder: SendForwarder;
  /** Takes forwarded sends from now on, storing each with `store`. */
  serve(store: (convId: string, send: SendRequest) => Promise<ForwardAnswer>): void;
  /** Takes no more (they are answered `undelivered`) and resolves once those it took are answered. */
  stop(): Promise<void>;
}

/** Forwarded sends waited for past any statement's deadline: a few of them (a send may wait for the statement before it), or a minute without one. */
const DEADLINES_WAITED = 4;
const WAIT_WITHOUT_DEADLINE_MS = 60_000;

/** How long a worker over `client` waits for a forwarded send's answer before storing it itself. */
export function forwardWaitMs(client: SqlClient): number {
  return client.kind === 'postgres' && Number.isFinite(client.deadlineMs) ? DEADLINES_WAITED * client.deadlineMs : WAIT_WITHOUT_DEADLINE_MS;
}

/**
 * In worker `slot` of `workers`: its end of the relay. A forwarded send not
 * answered within `waitMs` counts as `lost` (a stuck owner; a dead one is
 * reported by the primary at once).
 */
export function joinSendForwarding(slot: number, workers: number, waitMs: number): SendForwarding {
  const waiting = new Map<number, (answer: ForwardAnswer) => void>();
  let next = 0;
  let store: ((convId: string, send: SendRequest) => Promise<ForwardAnswer>) | null = null;
  const inService = new Set<Promise<unknown>>();
  /** What this worker has for the primary in this turn of its event loop: sent as one batch at the end of it. */
  let outbox: Outgoing | null = null;
  const flush = () => {
    const out = outbox!;
    outbox = null;
    toPrimary({ type: BATCH, messages: out.messages }, () => out.undelivered.forEach((undelivered) => undelivered()));
  };
  const post = (message: Forward | Answer, undelivered: () => void = () => undefined) => {
    if (outbox === null) {
      outbox = { messages: [], undelivered: [] };
      setImmediate(flush);
    }
    outbox.messages.push(message);
    outbox.undelivered.push(undelivered);
  };
  const toPrimary = (message: Batch | Ready, undelivered: () => void = () => undefined) => {
    if (!process.send || !process.connected) return undelivered();
    process.send(message, undefined, undefined, (error: Error | null) => error && undelivered());
  };
  const take = (message: Forward | Answer) => {
    if (isAnswer(message)) {
      waiting.get(message.id)?.(message.answer);
    } else {
      const answered = store === null ? Promise.resolve<ForwardAnswer>({ kind: 'undelivered' }) : store(message.convId, message.send);
      const served = answered.then((answer) => post({ type: ANSWER, id: message.id, answer }));
      inService.add(served);
      void served.finally(() => inService.delete(served));
    }
  };
  process.on('message', (message: unknown) => {
    if (isBatch(message)) for (const inner of message.messages) if (isForward(inner) || isAnswer(inner)) take(inner);
  });
  return {
    forwarder: {
      slot,
      workers,
      forward: (owner, convId, send) =>
        new Promise<ForwardAnswer>((resolve) => {
          const id = next++;
          const settle = (answer: ForwardAnswer) => {
            if (!waiting.delete(id)) return;
            clearTimeout(timer);
            resolve(answer);
          };
          const timer = setTimeout(() => settle({ kind: 'lost' }), waitMs);
          waiting.set(id, settle);
          post({ type: FORWARD, id, owner, convId, send }, () => settle({ kind: 'undelivered' }));
        }),
    },
    serve(storeOne) {
      store = storeOne;
      toPrimary({ type: READY, slot });
    },
    async stop() {
      store = null;
      await Promise.all(inService);
      // Their answers leave with the batch of this turn.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
