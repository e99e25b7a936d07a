import { describe, expect, it } from 'vitest';
import { createSendRelay, type Peer } from '../../src/sendForwarding.ts';
import type { SendRequest } from '../../src/store/sends.ts';

const SEND: SendRequest = { senderId: 'alice', clientMsgId: 'k1', text: 'hi', reply: null, mentions: { userIds: [], everyone: false } };
const CONV = '00000000-0000-4000-8000-000000000001';

/** A worker the relay talks to: records the batches it is sent and the messages in them; `refuses` makes every send fail. */
function fakeWorker(refuses = false) {
  const received: any[] = [];
  const batches: number[] = [];
  let connected = true;
  const peer: Peer = {
    isConnected: () => connected,
    send(batch, undelivered) {
      if (refuses) return undelivered();
      expect(batch.type).toBe('backscroll:send-batch');
      batches.push(batch.messages.length);
      received.push(...batch.messages);
    },
  };
  return { peer, received, batches, die: () => (connected = false) };
}

/** Messages from a worker to the primary, as one batch. */
const batch = (...messages: unknown[]) => ({ type: 'backscroll:send-batch', messages });
const forward = (id: number, owner: number) => ({ type: 'backscroll:send-forward', id, owner, convId: CONV, send: SEND });
const ready = (slot: number) => ({ type: 'backscroll:sends-ready', slot });
const answer = (id: number, seq: number) => ({ type: 'backscroll:send-answer', id, answer: { kind: 'answered', outcome: { kind: 'stored', message: { seq } } } });

describe('createSendRelay', () => {
  it('answers undelivered when no worker of the owner slot is ready yet', () => {
    const relay = createSendRelay();
    const sender = fakeWorker();
    relay.message(sender.peer, batch(forward(7, 1)));
    expect(sender.received).toEqual([{ type: 'backscroll:send-answer', id: 7, answer: { kind: 'undelivered' } }]);
  });

  it("relays a send to its slot's ready worker and the owner's answer back under the sender's own id", () => {
    const relay = createSendRelay();
    const [sender, owner] = [fakeWorker(), fakeWorker()];
    relay.message(owner.peer, ready(1));
    relay.message(sender.peer, batch(forward(7, 1)));
    relay.message(sender.peer, batch(forward(8, 1)));
    expect(owner.received.map((m) => ({ ...m, id: undefined }))).toEqual([
      { ...forward(7, 1), id: undefined },
      { ...forward(8, 1), id: undefined },
    ]);
    const [first, second] = owner.received.map((m) => m.id as number);
    // Two senders' ids may collide; the relay's own do not.
    expect(first).not.toBe(second);
    relay.message(owner.peer, batch(answer(second!, 2)));
    relay.message(owner.peer, batch(answer(first!, 1)));
    expect(sender.received).toEqual([
      { type: 'backscroll:send-answer', id: 8, answer: answer(0, 2).answer },
      { type: 'backscroll:send-answer', id: 7, answer: answer(0, 1).answer },
    ]);
    // An answer is relayed once: a repeat is dropped.
    relay.message(owner.peer, batch(answer(first!, 1)));
    expect(sender.received).toHaveLength(2);
  });

  it('relays what one batch holds for a worker as one batch, both ways', () => {
    const relay = createSendRelay();
    const [sender, owner] = [fakeWorker(), fakeWorker()];
    relay.message(owner.peer, ready(1));
    relay.message(sender.peer, batch(forward(1, 1), forward(2, 1), forward(3, 1)));
    expect(owner.batches).toEqual([3]);
    relay.message(owner.peer, batch(...owner.received.map((m, i) => answer(m.id, i + 1))));
    expect(sender.batches).toEqual([3]);
    expect(sender.received.map((m) => [m.id, m.answer.outcome.message.seq])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it('answers lost for every send the owner had when it exits, and relays to the worker that replaces it', () => {
    const relay = createSendRelay();
    const [sender, owner, replacement] = [fakeWorker(), fakeWorker(), fakeWorker()];
    relay.message(owner.peer, ready(1));
    relay.message(sender.peer, batch(forward(1, 1)));
    relay.message(sender.peer, batch(forward(2, 1)));
    owner.die();
    relay.exited(owner.peer);
    expect(sender.received).toEqual([
      { type: 'backscroll:send-answer', id: 1, answer: { kind: 'lost' } },
      { type: 'backscroll:send-answer', id: 2, answer: { kind: 'lost' } },
    ]);
    // Between the exit and the replacement being ready: undelivered, never relayed to the dead one.
    relay.message(sender.peer, batch(forward(3, 1)));
    expect(sender.received[2]).toEqual({ type: 'backscroll:send-answer', id: 3, answer: { kind: 'undelivered' } });
    relay.message(replacement.peer, ready(1));
    relay.message(sender.peer, batch(forward(4, 1)));
    expect(replacement.received).toHaveLength(1);
    expect(owner.received).toHaveLength(2);
  });

  it('answers undelivered when the owner cannot be sent to', () => {
    const relay = createSendRelay();
    const [sender, owner] = [fakeWorker(), fakeWorker(true)];
    relay.message(owner.peer, ready(0));
    relay.message(sender.peer, batch(forward(5, 0)));
    expect(sender.received).toEqual([{ type: 'backscroll:send-answer', id: 5, answer: { kind: 'undelivered' } }]);
  });

  it('drops the answer for a sender that exited, and sends nothing to a disconnected one', () => {
    const relay = createSendRelay();
    const [sender, owner] = [fakeWorker(), fakeWorker()];
    relay.message(owner.peer, ready(1));
    relay.message(sender.peer, batch(forward(1, 1)));
    sender.die();
    relay.exited(sender.peer);
    relay.message(owner.peer, batch(answer(owner.received[0].id, 1)));
    expect(sender.received).toEqual([]);
  });

  it('ignores messages that are not its own (metrics scrapes, listening reports)', () => {
    const relay = createSendRelay();
    const worker = fakeWorker();
    relay.message(worker.peer, { listening: 'http://localhost:4000/graphql' });
    relay.message(worker.peer, null);
    relay.message(worker.peer, 'text');
    expect(worker.received).toEqual([]);
  });
});
