import { describe, expect, it } from 'vitest';
import { DatabaseNoAnswerError, DatabaseTimeoutError, DatabaseUnavailableError } from '../../src/db/errors.ts';
import type { SqlRunner } from '../../src/db/runner.ts';
import { sendOwnerSlot } from '../../src/history/sendOwner.ts';
import { errorFromWire, errorToWire, type ForwardAnswer, HOT_GAP_MS, routeSends, type SendForwarder, serveForwardedSend } from '../../src/store/routedSends.ts';
import type { SendCoalescer } from '../../src/store/sendCoalescer.ts';
import type { SendOutcome, SendRequest } from '../../src/store/sends.ts';

const WORKERS = 2;
const THIS_SLOT = 0;
/** A conversation id owned by `slot`. */
const ownedBy = (slot: number) => {
  for (let i = 0; ; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    if (sendOwnerSlot(id, WORKERS) === slot) return id;
  }
};
const MINE = ownedBy(THIS_SLOT);
const THEIRS = ownedBy(1);
const db = { rows: async () => [], transaction: async () => undefined } as unknown as SqlRunner;
const SEND: SendRequest = { senderId: 'alice', clientMsgId: 'k1', text: 'hi', reply: null, mentions: { userIds: [], everyone: false } };
const outcome = (convId: string, by: string): SendOutcome => ({
  kind: 'stored',
  message: { convId, seq: 1, senderId: by, createdAt: '2026-12-07T00:00:00.000Z', revokedAt: null, revokedBy: null, editedAt: null, replyToSeq: null, threadRootSeq: null },
});

/** A local coalescer that records what it was asked to store, answering as the sender `local`. */
function recordingLocal(fail?: Error) {
  const calls: [SqlRunner, string, SendRequest][] = [];
  const local: SendCoalescer = {
    async send(runner, convId, send) {
      calls.push([runner, convId, send]);
      if (fail) throw fail;
      return outcome(convId, 'local');
    },
  };
  return { local, calls };
}

/** A forwarder answering `answer` and recording where it forwarded. */
function forwarderAnswering(answer: ForwardAnswer) {
  const forwarded: [number, string, SendRequest][] = [];
  const forwarder: SendForwarder = {
    slot: THIS_SLOT,
    workers: WORKERS,
    async forward(owner, convId, send) {
      forwarded.push([owner, convId, send]);
      return answer;
    },
  };
  return { forwarder, forwarded };
}

/** A clock the test moves. */
function manualClock() {
  let ms = 1000;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

/** `routeSends` over `local` and `forwarder` with THEIRS already busy: one send to it was just stored, and the local calls forgotten. */
async function busyRoute(recorded: ReturnType<typeof recordingLocal>, forwarder: SendForwarder, counted?: (kind: string) => void) {
  const clock = manualClock();
  const routed = routeSends(recorded.local, forwarder, { counted, now: clock.now });
  await routed.send(db, THEIRS, { ...SEND, clientMsgId: 'k0' });
  recorded.calls.length = 0;
  clock.advance(HOT_GAP_MS);
  return routed;
}

describe('routeSends', () => {
  it('stores sends to a conversation this worker owns here, however busy, forwarding nothing', async () => {
    const recorded = recordingLocal();
    const { forwarder, forwarded } = forwarderAnswering({ kind: 'undelivered' });
    const routed = routeSends(recorded.local, forwarder, { now: manualClock().now });
    expect(await routed.send(db, MINE, SEND)).toEqual(outcome(MINE, 'local'));
    expect(await routed.send(db, MINE, SEND)).toEqual(outcome(MINE, 'local'));
    expect(recorded.calls).toEqual([
      [db, MINE, SEND],
      [db, MINE, SEND],
    ]);
    expect(forwarded).toEqual([]);
  });

  it("stores a send to another worker's conversation here unless this worker sent to it within HOT_GAP_MS", async () => {
    const recorded = recordingLocal();
    const { forwarder, forwarded } = forwarderAnswering({ kind: 'answered', outcome: outcome(THEIRS, 'owner') });
    const clock = manualClock();
    const routed = routeSends(recorded.local, forwarder, { now: clock.now });
    expect(await routed.send(db, THEIRS, SEND)).toEqual(outcome(THEIRS, 'local'));
    clock.advance(HOT_GAP_MS + 1);
    expect(await routed.send(db, THEIRS, SEND)).toEqual(outcome(THEIRS, 'local'));
    expect(forwarded).toEqual([]);
    clock.advance(HOT_GAP_MS);
    expect(await routed.send(db, THEIRS, SEND)).toEqual(outcome(THEIRS, 'owner'));
    expect(forwarded).toEqual([[1, THEIRS, SEND]]);
    expect(recorded.calls).toHaveLength(2);
  });

  it("hands a send to a busy conversation of another worker to its owner and answers what the owner answered", async () => {
    const recorded = recordingLocal();
    const { forwarder, forwarded } = forwarderAnswering({ kind: 'answered', outcome: outcome(THEIRS, 'owner') });
    const counted: string[] = [];
    const routed = await busyRoute(recorded, forwarder, (kind) => counted.push(kind));
    expect(await routed.send(db, THEIRS, SEND)).toEqual(outcome(THEIRS, 'owner'));
    expect(forwarded).toEqual([[1, THEIRS, SEND]]);
    expect(recorded.calls).toEqual([]);
    expect(counted).toEqual(['answered']);
  });

  it('stores the send here when it could not be handed over, or its owner was lost with it', async () => {
    for (const kind of ['undelivered', 'lost'] as const) {
      const recorded = recordingLocal();
      const counted: string[] = [];
      const routed = await busyRoute(recorded, forwarderAnswering({ kind }).forwarder, (answer) => counted.push(answer));
      expect(await routed.send(db, THEIRS, SEND)).toEqual(outcome(THEIRS, 'local'));
      expect(recorded.calls).toEqual([[db, THEIRS, SEND]]);
      expect(counted).toEqual([kind]);
    }
  });

  it("throws the owner's database failure as the same class, so the client gets the same code", async () => {
    for (const error of [new DatabaseTimeoutError('canceled'), new DatabaseUnavailableError('down'), new DatabaseNoAnswerError('silent')]) {
      const recorded = recordingLocal();
      const routed = await busyRoute(recorded, forwarderAnswering({ kind: 'failed', error: errorToWire(error) }).forwarder);
      const thrown = await routed.send(db, THEIRS, SEND).catch((caught: unknown) => caught);
      expect(thrown).toBeInstanceOf(error.constructor);
      expect((thrown as Error).name).toBe(error.name);
      expect((thrown as Error).message).toBe(error.message);
      expect(recorded.calls).toEqual([]);
    }
  });
});

describe('serveForwardedSend', () => {
  it("answers the local coalescer's outcome, stored on the runner it is given", async () => {
    const { local, calls } = recordingLocal();
    expect(await serveForwardedSend(local, db, THEIRS, SEND)).toEqual({ kind: 'answered', outcome: outcome(THEIRS, 'local') });
    expect(calls).toEqual([[db, THEIRS, SEND]]);
  });

  it('answers a failure by its name and message rather than throwing', async () => {
    const { local } = recordingLocal(new DatabaseTimeoutError('canceling statement due to statement timeout'));
    expect(await serveForwardedSend(local, db, THEIRS, SEND)).toEqual({
      kind: 'failed',
      error: { name: 'DatabaseTimeoutError', message: 'canceling statement due to statement timeout' },
    });
  });

  it('turns an unexpected failure into a plain error that says where it happened, never a database class', () => {
    const error = errorFromWire(errorToWire(new TypeError('boom')));
    expect(error).not.toBeInstanceOf(DatabaseUnavailableError);
    expect(error).not.toBeInstanceOf(DatabaseTimeoutError);
    expect(error.message).toBe("the worker that stores this conversation's sends failed: boom");
  });
});
