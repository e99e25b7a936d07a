/**
 * Group commit for one conversation's sends: while a send to a
 * conversation is being stored, this process's further sends to it wait,
 * and are then stored together by one statement (`sendTogether`,
 * src/store/sends.ts), up to MAX_TOGETHER at a time.
 *
 * Why: every send takes the conversation's row lock (its seq counter) and
 * holds it through its commit, so a busy conversation's sends run one
 * after another, each paying a commit flush of its own: about 400 raw
 * sends a second into one conversation on this kind of machine, one at a
 * time, whatever the connections. A send alone is stored at once, exactly
 * as before; only sends that would have queued on the lock anyway wait,
 * and for no longer.
 *
 * One statement, not a transaction of one statement per send: a
 * transaction shared by waiting requests and queued while PostgreSQL was
 * down made postgres.js write on a closed socket (an uncaught TypeError in
 * `nextWrite`) in the outage test; a statement fails like any other.
 *
 * A statement that fails stores nothing, and each of its sends is then
 * stored alone, so each gets its own answer (a retry its first copy, a bad
 * one its own error): coalescing never changes what a send answers. A send
 * that mentions anyone is always stored alone, at once: its statement also
 * writes the mentions.
 *
 * The shared statement runs on the runner of its first send's request:
 * that request's statement count (and database time budget) carries the
 * others' send, whose requests show no statement for it.
 */
import type { SqlRunner } from '../db/runner.ts';
import type { Publisher } from './notify.ts';
import { mentionsAnyone, type SendOutcome, type SendRequest, sendMessage, sendTogether } from './sends.ts';

/** The most sends one statement stores: bounds how long the row lock is held. */
export const MAX_TOGETHER = 32;

/** A send waiting for the conversation's current one: `db` is its own request's runner. */
interface Waiting {
  db: SqlRunner;
  send: SendRequest;
  resolve(outcome: SendOutcome): void;
  reject(error: unknown): void;
}

/** A process's sends, stored together per conversation when they overlap. */
export interface SendCoalescer {
  /** Stores `send` to `convId` on `db` (the sender's request runner), alone or with others; answers as `sendMessage` would. */
  send(db: SqlRunner, convId: string, send: SendRequest): Promise<SendOutcome>;
}

/**
 * Coalesces sends, handing stored ones to `publisher`; `observe` is told
 * how many sends each statement took (metrics, tests).
 */
export function createSendCoalescer(publisher: Publisher, observe: (stored: number) => void = () => undefined): SendCoalescer {
  /** Conversations with a send being stored, and the sends waiting behind it. */
  const queues = new Map<string, Waiting[]>();

  const alone = async (db: SqlRunner, convId: string, { senderId, clientMsgId, text, reply, mentions }: SendRequest): Promise<SendOutcome> => {
    const outcome = await sendMessage(db, publisher, senderId, convId, clientMsgId, text, reply, mentions);
    observe(1);
    return outcome;
  };

  /** Stores `batch` together (on its first request's runner), or each alone if that fails. Never throws. */
  const storeBatch = async (convId: string, batch: Waiting[]): Promise<void> => {
    if (batch.length > 1) {
      try {
        const outcomes = await sendTogether(batch[0]!.db, publisher, convId, batch.map((waiting) => waiting.send));
        observe(batch.length);
        batch.forEach((waiting, i) => waiting.resolve(outcomes[i]!));
        return;
      } catch {
        // Nothing stored: each alone below, with its own answer or error.
      }
    }
    for (const waiting of batch) {
      try {
        waiting.resolve(await alone(waiting.db, convId, waiting.send));
      } catch (error) {
        waiting.reject(error);
      }
    }
  };

  /** Stores what waits for `convId`, batch after batch, until nothing does. */
  const drain = async (convId: string, queue: Waiting[]): Promise<void> => {
    while (queue.length > 0) await storeBatch(convId, queue.splice(0, MAX_TOGETHER));
    queues.delete(convId);
  };

  return {
    async send(db, convId, send) {
      if (mentionsAnyone(send.mentions)) return alone(db, convId, send);
      const queue = queues.get(convId);
      if (queue !== undefined) return new Promise<SendOutcome>((resolve, reject) => queue.push({ db, send, resolve, reject }));
      const mine: Waiting[] = [];
      queues.set(convId, mine);
      try {
        return await alone(db, convId, send);
      } finally {
        void drain(convId, mine);
      }
    },
  };
}
