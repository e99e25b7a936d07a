/**
 * Group commit for one conversation's sends: while a send to a
 * conversation is being stored, this process's further sends to it wait,
 * and are then stored together, in one transaction (src/store/sends.ts,
 * `storeTogether`), up to MAX_TOGETHER at a time.
 *
 * Why: every send takes the conversation's row lock (its seq counter) and
 * holds it through its commit, so a busy conversation's sends run one
 * after another, each paying a commit of its own. On this kind of machine
 * a send statement costs about 0.35 ms and a commit about 2 ms, so one
 * conversation took about 400 sends a second one at a time, and 1,570 in
 * transactions of ten (measured with the raw statements, 2026-12-02).
 * A send alone is stored at once, exactly as before; only sends that would
 * have queued on the lock anyway wait, and for no longer.
 *
 * A transaction that fails stores nothing, and each of its sends is then
 * stored alone, so each gets its own answer (a retry its first copy, a bad
 * one its own error): coalescing never changes what a send answers.
 *
 * The shared transaction runs on the runner of its first send's request:
 * that request's statement count (and database time budget) carries the
 * others' statements, which show none.
 */
import type { SqlRunner } from '../db/runner.ts';
import type { Publisher } from './notify.ts';
import { type SendOutcome, type SendRequest, storeOne, storeTogether } from './sends.ts';

/** The most sends one transaction stores: bounds how long the row lock is held (about 0.35 ms a send). */
export const MAX_TOGETHER = 32;

/** A send waiting for the conversation's current one: `db` is its own request's runner. */
interface Waiting {
  db: SqlRunner;
  request: SendRequest;
  resolve(outcome: SendOutcome): void;
  reject(error: unknown): void;
}

/** A process's sends, stored together per conversation when they overlap. */
export interface SendCoalescer {
  /** Stores `request` on `db` (the sender's request runner), alone or with others to the same conversation; answers as `storeOne` would. */
  send(db: SqlRunner, request: SendRequest): Promise<SendOutcome>;
}

/**
 * Coalesces sends, handing stored ones to `publisher`; `observe` is told
 * how many sends each transaction stored (metrics, tests).
 */
export function createSendCoalescer(publisher: Publisher, observe: (stored: number) => void = () => undefined): SendCoalescer {
  /** Conversations with a send being stored, and the sends waiting behind it. */
  const queues = new Map<string, Waiting[]>();

  const settle = async (waiting: Waiting, work: () => Promise<SendOutcome>) => {
    try {
      waiting.resolve(await work());
    } catch (error) {
      waiting.reject(error);
    }
  };

  /** Stores `batch` together (on its first request's runner), or each alone if that fails. Never throws. */
  const storeBatch = async (batch: Waiting[]): Promise<void> => {
    if (batch.length > 1) {
      try {
        const outcomes = await storeTogether(batch[0]!.db, publisher, batch.map((waiting) => waiting.request));
        observe(batch.length);
        batch.forEach((waiting, i) => waiting.resolve(outcomes[i]!));
        return;
      } catch {
        // Rolled back whole: each alone below, with its own answer or error.
      }
    }
    for (const waiting of batch) {
      await settle(waiting, async () => {
        const outcome = await storeOne(waiting.db, publisher, waiting.request);
        observe(1);
        return outcome;
      });
    }
  };

  /** Stores what waits for `convId`, batch after batch, until nothing does. */
  const drain = async (convId: string, queue: Waiting[]): Promise<void> => {
    while (queue.length > 0) await storeBatch(queue.splice(0, MAX_TOGETHER));
    queues.delete(convId);
  };

  return {
    async send(db, request) {
      const queue = queues.get(request.convId);
      if (queue !== undefined) return new Promise<SendOutcome>((resolve, reject) => queue.push({ db, request, resolve, reject }));
      const mine: Waiting[] = [];
      queues.set(request.convId, mine);
      try {
        const outcome = await storeOne(db, publisher, request);
        observe(1);
        return outcome;
      } finally {
        void drain(request.convId, mine);
      }
    },
  };
}
