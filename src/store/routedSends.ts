/**
 * Sends to a busy conversation stored by the worker that owns it
 * (sendOwnerSlot): a send made through another worker is forwarded to the
 * owner, so one process's coalescer groups every send of that
 * conversation, and the processes stop taking its row lock in turn with
 * half-full statements.
 *
 * Only to a busy one: a conversation this worker stored or forwarded a send
 * to within the last HOT_GAP_MS. Forwarding costs each send two round trips
 * through the primary; over 1,000 conversations, with every send forwarded,
 * the server's CPU per send rose by a third and PostgreSQL's by a sixth
 * (`npm run bench:cpu -- send-spread 3 8 2`, issue 15's note), for
 * conversations whose sends seldom meet anyway.
 *
 * Forwarding only chooses where a send is stored, never whether: a send
 * that could not be handed over, or whose owner died or did not answer, is
 * stored here instead. The clientMsgId makes that safe: if the owner had
 * stored it, the send here is a retry and answers that first copy (the
 * unique index and the conversation's row lock settle a race between the
 * two). What the owner answers, outcome or failure, is answered as if the
 * send had been stored here.
 */
import { LRUCache } from 'lru-cache';
import { DatabaseNoAnswerError, DatabaseTimeoutError, DatabaseUnavailableError } from '../db/errors.ts';
import type { SqlRunner } from '../db/runner.ts';
import { sendOwnerSlot } from '../history/sendOwner.ts';
import type { SendCoalescer } from './sendCoalescer.ts';
import type { SendOutcome, SendRequest } from './sends.ts';

/** A failure the owner met, as it crosses between processes. */
export interface WireError {
  name: string;
  message: string;
}

/** What came back for a forwarded send. */
export type ForwardAnswer =
  | { kind: 'answered'; outcome: SendOutcome }
  | { kind: 'failed'; error: WireError }
  /** It never reached an owner (none ready, or it was stopping): nothing was stored. */
  | { kind: 'undelivered' }
  /** The owner had it, then died or did not answer in time: it may have stored it. */
  | { kind: 'lost' };

/** How a worker reaches the others. */
export interface SendForwarder {
  /** This worker's slot, 0 to `workers` - 1. */
  readonly slot: number;
  readonly workers: number;
  /** Hands `send` to the worker in slot `owner`; never rejects. */
  forward(owner: number, convId: string, send: SendRequest): Promise<ForwardAnswer>;
}

/** A conversation is busy while its sends through one worker come at most this far apart (about 50 a second or more). */
export const HOT_GAP_MS = 20;
/** Conversations whose last send time a worker keeps: more than are busy at once. */
const REMEMBERED = 10_000;

export interface RoutingOptions {
  /** Told how each forwarded send came back (metrics). */
  counted?(answer: ForwardAnswer['kind']): void;
  /** The clock, in ms (tests). */
  now?(): number;
}

/** `local` (this process's coalescer) for a conversation this worker owns or that is not busy; the owner's for the others. */
export function routeSends(local: SendCoalescer, forwarder: SendForwarder, { counted = () => undefined, now = () => performance.now() }: RoutingOptions = {}): SendCoalescer {
  const lastSendAt = new LRUCache<string, number>({ max: REMEMBERED });
  const busy = (convId: string): boolean => {
    const at = now();
    const last = lastSendAt.get(convId);
    lastSendAt.set(convId, at);
    return last !== undefined && at - last <= HOT_GAP_MS;
  };
  return {
    async send(db, convId, send) {
      const owner = sendOwnerSlot(convId, forwarder.workers);
      if (owner === forwarder.slot || !busy(convId)) return local.send(db, convId, send);
      const answer = await forwarder.forward(owner, convId, send);
      counted(answer.kind);
      switch (answer.kind) {
        case 'answered':
          return answer.outcome;
        case 'failed':
          throw errorFromWire(answer.error);
        case 'undelivered':
        case 'lost':
          return local.send(db, convId, send);
      }
    },
  };
}

/** Stores a send forwarded to this worker, on `db` (a runner of the process's own), as the answer to send back. Never rejects. */
export async function serveForwardedSend(local: SendCoalescer, db: SqlRunner, convId: string, send: SendRequest): Promise<ForwardAnswer> {
  try {
    return { kind: 'answered', outcome: await local.send(db, convId, send) };
  } catch (error) {
    return { kind: 'failed', error: errorToWire(error) };
  }
}

/** The database failures the API answers with codes of their own: rebuilt as themselves on the other side. */
const KNOWN_FAILURES: Record<string, (message: string) => Error> = {
  DatabaseTimeoutError: (message) => new DatabaseTimeoutError(message),
  DatabaseUnavailableError: (message) => new DatabaseUnavailableError(message),
  DatabaseNoAnswerError: (message) => new DatabaseNoAnswerError(message),
};

export function errorToWire(error: unknown): WireError {
  return error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) };
}

/** The error the owner met, as the error formatter should see it: a database failure keeps its class, anything else is an internal error. */
export function errorFromWire(wire: WireError): Error {
  const known = KNOWN_FAILURES[wire.name];
  return known === undefined ? new Error(`the worker that stores this conversation's sends failed: ${wire.message}`) : known(wire.message);
}
