import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, SEND } from '../helpers/operations.ts';

const MAX_SEQ = 'query ($id: ID!) { conversation(id: $id) { maxSeq } }';

describe.each(backends)('Rate limits per user on mutations (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    harness = await startHarness(backend, {
      RATE_LIMIT_SEND_PER_SECOND: '1',
      RATE_LIMIT_SEND_BURST: '3',
      RATE_LIMIT_MUTATIONS_PER_SECOND: '1',
      RATE_LIMIT_MUTATIONS_BURST: '2',
    });
    alice = await harness.client('alice');
    bob = await harness.client('bob');
  });
  afterAll(() => harness.close());

  it('refuses sends past the burst with RATE_LIMITED, HTTP 429 and a retry hint, storing nothing; other users are unaffected', async () => {
    const conv = await createGroup(alice, ['bob']);
    const sendAs = (client: Client, n: number) => client.gql(SEND, { conversationId: conv.id, clientMsgId: `${client.userId}-${n}`, text: `message ${n}` });
    const results = [];
    for (let n = 1; n <= 4; n++) results.push(await sendAs(alice, n));
    expect(results.map(codes)).toEqual([[], [], [], ['RATE_LIMITED']]);
    const refused = results[3]!;
    expect(refused.status).toBe(429);
    // Three sends per window of 3 / 1 seconds: the window ends within 3 s.
    expect(refused.errors![0]!.extensions).toEqual({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
    expect(refused.errors![0]!.extensions!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.errors![0]!.extensions!.retryAfterSeconds).toBeLessThanOrEqual(3);
    expect((await alice.gql(MAX_SEQ, { id: conv.id })).data.conversation.maxSeq).toBe(3);
    expect(codes(await sendAs(bob, 1))).toEqual([]);
  });

  it('limits other mutations with their own bucket', async () => {
    const carol = await harness.client('carol');
    const create = () => carol.gql('mutation { createConversation(input: { memberIds: [] }) { conversation { id } } }');
    expect([codes(await create()), codes(await create()), codes(await create())]).toEqual([[], [], ['RATE_LIMITED']]);
  });

  it('leaves queries alone', async () => {
    const dave = await harness.client('dave');
    for (let i = 0; i < 10; i++) expect(codes(await dave.gql('{ viewer { id } }'))).toEqual([]);
  });
});
