/**
 * 20 clients send 500 messages each into one conversation, and a fifth of
 * the sends are retried at the same moment with the same clientMsgId (a
 * client that timed out and tried again while the first attempt still ran):
 * exactly 10,000 messages, seqs 1..10,000, each clientMsgId on one seq, and
 * every attempt of a send answered with that seq.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, SEND } from '../helpers/operations.ts';

const CLIENTS = 20;
const SENDS_PER_CLIENT = 500;
const TOTAL = CLIENTS * SENDS_PER_CLIENT;
/** Every fifth send goes out twice at once. */
const RETRY_EVERY = 5;

describe.each(backends)('Concurrent sends with concurrent retries (%s)', (backend) => {
  let harness: Harness;
  let clients: Client[];

  beforeAll(async () => {
    harness = await startHarness(backend);
    clients = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => harness.client(`user-${i}`)));
  });
  afterAll(() => harness.close());

  it(`stores exactly ${TOTAL.toLocaleString('en')} messages with seqs 1..${TOTAL}, each clientMsgId once`, { timeout: 180_000 }, async () => {
    const conversation = await createGroup(clients[0]!, clients.slice(1).map((c) => c.userId));
    /** Every seq each attempt was answered with, by clientMsgId. */
    const answers = new Map<string, number[]>();
    let duplicatesAnswered = 0;
    const started = Date.now();
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; i < SENDS_PER_CLIENT; i++) {
          const clientMsgId = `c${c}-m${i}`;
          const attempts = i % RETRY_EVERY === 0 ? 2 : 1;
          const responses = await Promise.all(
            Array.from({ length: attempts }, () => client.gql(SEND, { conversationId: conversation.id, clientMsgId, text: `message ${i} from ${c}` })),
          );
          for (const response of responses) {
            if (response.errors) throw new Error(`${clientMsgId}: ${JSON.stringify(response.errors)}`);
            if (response.data.sendMessage.deduplicated) duplicatesAnswered += 1;
          }
          answers.set(clientMsgId, responses.map((r) => r.data.sendMessage.message.seq));
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;

    const stored = rowsOf<{ seq: number; sender_id: string; client_msg_id: string }>(
      await harness.database.db.execute(sql`select seq, sender_id, client_msg_id from messages order by seq`),
    );
    expect(stored.map((r) => r.seq)).toEqual(Array.from({ length: TOTAL }, (_, k) => k + 1));
    const seqByKey = new Map(stored.map((r) => [`${r.sender_id}/${r.client_msg_id}`, r.seq]));
    expect(seqByKey.size).toBe(TOTAL);
    // Every attempt of a send was answered with the one seq the send is stored at.
    const wrong = [...answers].filter(([key, seqs]) => {
      const sender = `user-${key.slice(1, key.indexOf('-'))}`;
      return seqs.some((seq) => seq !== seqByKey.get(`${sender}/${key}`));
    });
    expect(wrong).toEqual([]);
    const retried = TOTAL / RETRY_EVERY;
    expect(duplicatesAnswered).toBe(retried);
    const maxSeq = await clients[0]!.gql('query ($id: ID!) { conversation(id: $id) { maxSeq } }', { id: conversation.id });
    expect(maxSeq.data.conversation.maxSeq).toBe(TOTAL);
    console.log(
      `concurrency (${backend}): ${TOTAL + retried} sends (${retried} concurrent retries) from ${CLIENTS} clients in ${seconds.toFixed(1)} s: ` +
        `${stored.length} stored, seqs dense 1..${TOTAL}, every clientMsgId on one seq`,
    );
  });
});
