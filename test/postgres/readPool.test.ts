/**
 * The read pool (src/db/pipelinedReads.ts): a query operation's statements
 * go through the primary's read pool, so a page is answered while every
 * connection of the main pool is held (and a mutation waits for one); and a
 * read never queues behind more than READ_PIPELINE_DEPTH statements a read
 * connection: past that it runs on the main pool.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_PIPELINE_DEPTH } from '../../src/db/pipelinedReads.ts';
import { createRunner } from '../../src/db/runner.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, MESSAGES, send } from '../helpers/operations.ts';

/** Whether `work` settles within `ms`: the answer, or 'pending'. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('the read pool', () => {
  let harness: Harness;
  let alice: Client;
  let conv: { id: string };

  beforeAll(async () => {
    harness = await startHarness('postgres');
    alice = await harness.client('alice');
    conv = await createGroup(alice, ['bob']);
    await send(alice, conv.id, 'hello');
  });
  afterAll(async () => {
    await harness?.close();
  });

  const page = () => alice.gql<{ conversation: { messages: { edges: { node: { content: { text: string } } }[] } } }>(MESSAGES, { id: conv.id, last: 10 });

  it('answers a page while every main-pool connection is held, and a mutation waits for one', async () => {
    const main = harness.database.client;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const runner = createRunner(main);
    const holders = Array.from({ length: main.usage!.size }, () =>
      runner.transaction(async (tx) => {
        await tx.rows(sql`select 1`);
        await released;
      }),
    );
    try {
      await expect.poll(() => main.usage!.inFlight).toBe(main.usage!.size);
      const sent = send(alice, conv.id, 'while held');
      const answered = await within(page(), 3000);
      expect(answered === 'pending' ? 'pending' : answered.data?.conversation.messages.edges.map((e) => e.node.content.text)).toEqual(['hello']);
      expect(await within(sent, 300)).toBe('pending');
      release();
      expect((await sent).seq).toBe(2);
    } finally {
      release();
      await Promise.all(holders);
    }
  });

  it('sends a read to the main pool once the read connections hold READ_PIPELINE_DEPTH statements each', async () => {
    const reads = harness.database.reads!;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // A lock held by a main-pool transaction, which every statement on the read connections then waits for in turn.
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = createRunner(harness.database.client).transaction(async (tx) => {
      await tx.rows(sql`select pg_advisory_xact_lock(4242)`);
      locked();
      await released;
    });
    await isLocked;
    const readRunner = createRunner(reads);
    const waiting = Array.from({ length: reads.usage!.size * READ_PIPELINE_DEPTH }, () => readRunner.rows(sql`select pg_advisory_xact_lock(4242)`));
    try {
      expect(reads.usage!.inFlight).toBe(reads.usage!.size * READ_PIPELINE_DEPTH);
      const answered = await within(page(), 3000);
      expect(answered === 'pending' ? 'pending' : answered.data?.conversation.messages.edges.length).toBeGreaterThan(0);
    } finally {
      release();
      await holder;
      await Promise.all(waiting);
    }
    expect(reads.usage!.inFlight).toBe(0);
  });
});
