/**
 * The process's publisher of live events: notices handed over together go
 * out as one notification, in order; a batch in flight collects the next;
 * closing publishes what waits; a failed publication is logged, not thrown.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { createLogger } from '../../src/log.ts';
import { EVENTS_CHANNEL, type Notice, parsePayload } from '../../src/store/notify.ts';
import { createPublisher } from '../../src/store/publisher.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';

const C = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const sent = (seq: number): Notice => ({ convId: C, kind: 'sent', seq, toSeq: seq, userId: null, changeSeq: null });

describe.each(backends)('The publisher (%s)', (backend) => {
  let database: DatabaseHandle;
  /** Every notification on the channel, each as the list of seqs it carried. */
  const received: number[][] = [];
  let stop: () => Promise<void>;

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    const client = database.client;
    const record = (payload: string) => received.push((parsePayload(payload) as Notice[]).map((n) => n.seq));
    stop =
      client.kind === 'pglite'
        ? await client.pglite.listen(EVENTS_CHANNEL, record)
        : (await client.sql.listen(EVENTS_CHANNEL, record)).unlisten;
  });
  afterAll(async () => {
    await stop?.();
    await database?.close();
  });

  it('publishes notices handed over within a few milliseconds as one notification, in order', async () => {
    received.length = 0;
    const publisher = createPublisher(database.client, createLogger('silent'));
    publisher.publish([sent(1)]);
    publisher.publish([sent(2), sent(3)]);
    publisher.publish([sent(4)]);
    await vi.waitFor(() => expect(received).toEqual([[1, 2, 3, 4]]));
    await publisher.close();
  });

  it('collects what is handed over while a batch is in flight into the next batch', async () => {
    received.length = 0;
    const publisher = createPublisher(database.client, createLogger('silent'));
    publisher.publish([sent(1)]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let seq = 2; seq <= 50; seq++) publisher.publish([sent(seq)]);
    await vi.waitFor(() => expect(received.flat()).toEqual(Array.from({ length: 50 }, (_, i) => i + 1)));
    expect(received.length).toBeLessThanOrEqual(3);
    await publisher.close();
  });

  it('publishes what waits when closed, and nothing after', async () => {
    received.length = 0;
    const publisher = createPublisher(database.client, createLogger('silent'));
    publisher.publish([sent(7)]);
    await publisher.close();
    publisher.publish([sent(8)]);
    await vi.waitFor(() => expect(received).toEqual([[7]]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received).toEqual([[7]]);
  });

  it('logs a publication that failed instead of throwing, and goes on publishing', async () => {
    received.length = 0;
    const warnings: string[] = [];
    const logger = createLogger('silent');
    logger.warn = ((_fields: unknown, message: string) => void warnings.push(message)) as typeof logger.warn;
    // A notice no payload can carry (PostgreSQL refuses 8,000 bytes) fails its batch.
    const huge: Notice = { ...sent(1), userId: 'x'.repeat(9000) };
    const publisher = createPublisher(database.client, logger);
    publisher.publish([huge]);
    await vi.waitFor(() => expect(warnings).toEqual(['live events could not be published; subscribers will be asked to catch up']));
    publisher.publish([sent(2)]);
    await vi.waitFor(() => expect(received).toEqual([[2]]));
    await publisher.close();
  });
});
