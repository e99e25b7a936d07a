/**
 * Group commit for a process's sends: at most MAX_IN_FLIGHT send
 * statements of this process run at once, and the sends that arrive
 * meanwhile wait, then go together in one statement (`sendTogether`,
 * src/store/sends.ts), up to MAX_TOGETHER at a time, to one conversation or
 * several. A conversation has at most one of them in flight: its further
 * sends wait for it, whatever is free.
 *
 * Why: every send pays a statement and a commit flush of its own, and
 * takes its conversation's row lock (the seq counter) until it commits.
 * Into one busy conversation, sends run one after another on that lock:
 * about 400 raw sends a second on this kind of machine, whatever the
 * connections. Across many conversations, each send alone is a statement,
 * a transaction and a commit for PostgreSQL, and twenty of them at once
 * contend for its locks; stored a few at a time, PostgreSQL spent 33-42%
 * less CPU per send over 1,000 conversations (issue 15's note, measured
 * with `npm run bench:cpu -- send-spread`). A send that finds a slot free
 * (and its conversation free) is stored at once, alone, exactly as before;
 * past that, it waits for a statement to finish, and goes with the others
 * waiting in the next one.
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

/** The most sends one statement stores: bounds how long its row locks are held. */
export const MAX_TOGETHER = 32;

/**
 * The most send statements a process runs at once. Past it sends wait and
 * go together; below it each goes alone at once. Small, because the point
 * is fewer, fuller statements under load; more than one, so a statement
 * waiting on a conversation's row lock (held by another process) does not
 * hold up every other send of this one.
 */
export const MAX_IN_FLIGHT = 2;

/** A send waiting for a slot: `db` is its own request's runner. */
interface Waiting {
  db: SqlRunner;
  convId: string;
  send: SendRequest;
  resolve(outcome: SendOutcome): void;
  reject(error: unknown): void;
}

/** A process's sends, stored together when they overlap. */
export interface SendCoalescer {
  /** Stores `send` to `convId` on `db` (the sender's request runner), alone or with others; answers as `sendMessage` would. */
  send(db: SqlRunner, convId: string, send: SendRequest): Promise<SendOutcome>;
}

/**
 * Coalesces sends, handing stored ones to `publisher`; `observe` is told
 * how many sends each statement took (metrics, tests).
 */
export function createSendCoalescer(publisher: Publisher, observe: (stored: number) => void = () => undefined): SendCoalescer {
  /** Sends not yet in a statement, in the order they came. */
  const waiting: Waiting[] = [];
  /** Conversations with a statement of this process in flight. */
  const busy = new Set<string>();
  let inFlight = 0;

  const alone = async (db: SqlRunner, convId: string, { senderId, clientMsgId, text, reply, mentions }: SendRequest): Promise<SendOutcome> => {
    const outcome = await sendMessage(db, publisher, senderId, convId, clientMsgId, text, reply, mentions);
    observe(1);
    return outcome;
  };

  /** Stores `batch` together (on its first request's runner), or each alone if that fails; answers each one's outcome or error. Never throws. */
  const storeBatch = async (batch: Waiting[]): Promise<PromiseSettledResult<SendOutcome>[]> => {
    if (batch.length > 1) {
      try {
        const outcomes = await sendTogether(
          batch[0]!.db,
          publisher,
          batch.map((w) => ({ convId: w.convId, ...w.send })),
        );
        observe(batch.length);
        return outcomes.map((value) => ({ status: 'fulfilled', value }));
      } catch {
        // Nothing stored: each alone below, with its own answer or error.
      }
    }
    const settled: PromiseSettledResult<SendOutcome>[] = [];
    for (const w of batch) {
      try {
        settled.push({ status: 'fulfilled', value: await alone(w.db, w.convId, w.send) });
      } catch (reason) {
        settled.push({ status: 'rejected', reason });
      }
    }
    return settled;
  };

  /** Takes the next batch out of `waiting`: in arrival order, sends to conversations not in flight, up to MAX_TOGETHER. */
  const takeBatch = (): Waiting[] => {
    const batch: Waiting[] = [];
    for (let i = 0; i < waiting.length && batch.length < MAX_TOGETHER; ) {
      if (busy.has(waiting[i]!.convId)) i++;
      else batch.push(...waiting.splice(i, 1));
    }
    return batch;
  };

  /** Starts statements while a slot is free and something can go. */
  const pump = (): void => {
    while (inFlight < MAX_IN_FLIGHT) {
      const batch = takeBatch();
      if (batch.length === 0) return;
      const convIds = new Set(batch.map((w) => w.convId));
      for (const convId of convIds) busy.add(convId);
      inFlight += 1;
      void storeBatch(batch).then((settled) => {
        // The slot and the conversations are free before anyone is answered,
        // so a sender's next send, made on the answer, finds them free.
        for (const convId of convIds) busy.delete(convId);
        inFlight -= 1;
        batch.forEach((w, i) => {
          const result = settled[i]!;
          if (result.status === 'fulfilled') w.resolve(result.value);
          else w.reject(result.reason);
        });
        pump();
      });
    }
  };

  return {
    send(db, convId, send) {
      if (mentionsAnyone(send.mentions)) return alone(db, convId, send);
      return new Promise<SendOutcome>((resolve, reject) => {
        waiting.push({ db, convId, send, resolve, reject });
        pump();
      });
    },
  };
}
