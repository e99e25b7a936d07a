import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { decodeMessageId, messageGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type GraphQLResponse, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { AROUND, CLEAR, createGroup, DELETE_FOR_ME, type Edge, MARK_READ, MESSAGES, REVOKE, send, SEND } from '../helpers/operations.ts';

const MESSAGE_FIELDS = `id seq sender { id } conversation { id }
  content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt revokedBy { id } } }`;

const MESSAGE = `query Message($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`;

const NODE = `query Node($id: ID!) {
  node(id: $id) { __typename id ... on Message { ${MESSAGE_FIELDS} } ... on Conversation { kind title maxSeq readSeq } }
}`;

const CONVERSATION = `query Conversation($id: ID!) { conversation(id: $id) { id kind title maxSeq readSeq } }`;

const OPEN_DIRECT = `mutation Open($userId: ID!) { openDirectConversation(userId: $userId) { conversation { id kind } } }`;

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Consecutive seqs from `from` to `to`, both included. */
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The error codes of a refused operation, after checking that it answered no data (null fields at most). */
function refusal(response: GraphQLResponse): unknown[] {
  const data = response.data ?? null;
  if (data !== null) expect(data).toEqual(Object.fromEntries(Object.keys(data).map((field) => [field, null])));
  return codes(response);
}

describe.each(backends)('Views of one stored history (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let dave: Client;

  /** Every visible seq of conversation `id` for `client` (histories here are at most 200 long). */
  const visibleSeqs = async (client: Client, id: string): Promise<number[]> => {
    const seqs: number[] = [];
    let before: string | undefined;
    for (;;) {
      const response = await client.gql(MESSAGES, { id, last: 100, before });
      expect(response.errors).toBeUndefined();
      const connection = response.data.conversation.messages;
      seqs.unshift(...connection.edges.map((e: Edge) => e.node.seq));
      if (!connection.pageInfo.hasPreviousPage) return seqs;
      before = connection.pageInfo.startCursor;
    }
  };
  /** Moves a message's `created_at` `seconds` into the past, as if it had been sent then. */
  const backdate = async (convUuid: string, seq: number, seconds: number) => {
    await harness.database.db.execute(sql`update messages set created_at = now() - ${seconds}::int * interval '1 second'
      where conv_id = ${convUuid} and seq = ${seq}`);
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    dave = await harness.client('dave');
  });
  afterAll(() => harness.close());

  describe('deleteMessagesForMe', () => {
    /** 120 seeded messages; alice owns it, bob and carol are members. */
    let group: { id: string; uuid: string };
    /** A group bob is not in. */
    let elsewhere: { id: string; uuid: string };
    /** A group bob has cleared through seq 5. */
    let cleared: { id: string; uuid: string };
    const idOf = (seq: number, uuid = group.uuid) => messageGlobalId(uuid, seq);
    const hide = (client: Client, seqs: (number | string)[]) =>
      client.gql(DELETE_FOR_ME, { messageIds: seqs.map((s) => (typeof s === 'number' ? idOf(s) : s)) });

    beforeAll(async () => {
      group = await createGroup(alice, ['bob', 'carol'], 'hides');
      elsewhere = await createGroup(alice, ['carol'], 'without bob');
      cleared = await createGroup(alice, ['bob'], 'cleared by bob');
      await seedMessages(harness, group.uuid, 'alice', 120);
      await seedMessages(harness, elsewhere.uuid, 'alice', 5);
      await seedMessages(harness, cleared.uuid, 'alice', 5);
      expect((await bob.gql(CLEAR, { conversationId: cleared.id })).data.clearHistory.clearedThroughSeq).toBe(5);
      await seedMessages(harness, cleared.uuid, 'alice', 5);
    });

    it('hides the messages from the caller only; other members still see them', async () => {
      expect((await hide(bob, [3, 4])).data).toEqual({ deleteMessagesForMe: { deletedCount: 2 } });
      expect(await visibleSeqs(bob, group.id)).toEqual([1, 2, ...range(5, 120)]);
      expect(await visibleSeqs(alice, group.id)).toEqual(range(1, 120));
      expect(await visibleSeqs(carol, group.id)).toEqual(range(1, 120));
      expect(codes(await bob.gql(MESSAGE, { id: idOf(3) }))).toEqual(['NOT_FOUND']);
      expect((await carol.gql(MESSAGE, { id: idOf(3) })).data.message.seq).toBe(3);
    });

    it('is harmless to repeat and counts only messages newly hidden', async () => {
      expect((await hide(bob, [10, 11])).data).toEqual({ deleteMessagesForMe: { deletedCount: 2 } });
      expect((await hide(bob, [10, 11, 12])).data).toEqual({ deleteMessagesForMe: { deletedCount: 1 } });
      expect((await hide(bob, [10, 11, 12])).data).toEqual({ deleteMessagesForMe: { deletedCount: 0 } });
      // The same id twice in one call is one message.
      expect((await hide(bob, [13, 13])).data).toEqual({ deleteMessagesForMe: { deletedCount: 1 } });
      expect((await visibleSeqs(bob, group.id)).slice(0, 8)).toEqual([1, 2, 5, 6, 7, 8, 9, 14]);
    });

    it('hides messages from several of the caller\'s conversations in one call', async () => {
      expect((await hide(bob, [40, messageGlobalId(cleared.uuid, 8)])).data).toEqual({ deleteMessagesForMe: { deletedCount: 2 } });
      expect((await visibleSeqs(bob, group.id)).includes(40)).toBe(false);
      expect(await visibleSeqs(bob, cleared.id)).toEqual([6, 7, 9, 10]);
    });

    it.each([
      ['a seq never allocated in the conversation', () => messageGlobalId(group.uuid, 121)],
      ['a message of a conversation the caller is not in', () => messageGlobalId(elsewhere.uuid, 1)],
      ['a message the caller cleared', () => messageGlobalId(cleared.uuid, 3)],
      ['a conversation id', () => group.id],
      ['a garbage id', () => 'garbage'],
    ])('hides nothing and answers NOT_FOUND when one id is %s', async (_what, badId) => {
      const response = await hide(bob, [20, 21, badId(), 22]);
      expect(refusal(response)).toEqual(['NOT_FOUND']);
      expect((await visibleSeqs(bob, group.id)).filter((seq) => seq >= 20 && seq <= 22)).toEqual([20, 21, 22]);
    });

    it('answers NOT_FOUND to a caller who is not in the conversation, and hides nothing for anyone', async () => {
      expect(refusal(await hide(dave, [30]))).toEqual(['NOT_FOUND']);
      expect(refusal(await hide(bob, [messageGlobalId(elsewhere.uuid, 2)]))).toEqual(['NOT_FOUND']);
      expect(await visibleSeqs(carol, elsewhere.id)).toEqual(range(1, 5));
      expect((await visibleSeqs(carol, group.id)).includes(30)).toBe(true);
    });

    it('refuses 0 and 101 ids with BAD_USER_INPUT naming messageIds, hiding nothing', async () => {
      for (const seqs of [[], range(1, 101)]) {
        const response = await hide(carol, seqs);
        expect(refusal(response)).toEqual(['BAD_USER_INPUT']);
        expect(response.errors![0]!.extensions!.argumentName).toBe('messageIds');
      }
      expect(await visibleSeqs(carol, group.id)).toEqual(range(1, 120));
    });

    it('accepts 100 ids in one call', async () => {
      expect((await hide(carol, range(21, 120))).data).toEqual({ deleteMessagesForMe: { deletedCount: 100 } });
      expect(await visibleSeqs(carol, group.id)).toEqual(range(1, 20));
    });
  });

  describe('revokeMessage', () => {
    /** Owned by alice; bob and carol are members. */
    let group: { id: string; uuid: string };
    const revoked = (revokedAt: string, by: string) => ({ __typename: 'RevokedContent', revokedAt, revokedBy: { id: by } });

    beforeAll(async () => {
      group = await createGroup(alice, ['bob', 'carol'], 'revokes');
    });

    it('lets the sender revoke within the window', async () => {
      const message = await send(bob, group.id, 'a fresh mistake');
      const before = Date.now();
      const response = await bob.gql(REVOKE, { messageId: message.id });
      expect(response.errors).toBeUndefined();
      const { revokedAt } = response.data.revokeMessage.message.content;
      expect(response.data).toEqual({ revokeMessage: { message: { id: message.id, seq: message.seq, content: revoked(revokedAt, 'bob') } } });
      expect(revokedAt).toMatch(ISO_MILLIS);
      expect(Math.abs(Date.parse(revokedAt) - before)).toBeLessThan(10_000);
    });

    it('lets the sender revoke at 119 s but not at 121 s (the default window is 120 s)', async () => {
      const young = await send(bob, group.id, 'sent 119 seconds ago');
      const old = await send(bob, group.id, 'sent 121 seconds ago');
      await backdate(group.uuid, young.seq, 119);
      await backdate(group.uuid, old.seq, 121);
      expect((await bob.gql(REVOKE, { messageId: young.id })).data.revokeMessage.message.content.__typename).toBe('RevokedContent');
      expect(refusal(await bob.gql(REVOKE, { messageId: old.id }))).toEqual(['FORBIDDEN']);
      // The refusal changed nothing.
      expect((await carol.gql(MESSAGE, { id: old.id })).data.message.content).toEqual({ __typename: 'TextContent', text: 'sent 121 seconds ago' });
    });

    it("lets the group's owner revoke anyone's message at any time", async () => {
      const message = await send(bob, group.id, 'from yesterday');
      await backdate(group.uuid, message.seq, 24 * 3600);
      const response = await alice.gql(REVOKE, { messageId: message.id });
      expect(response.errors).toBeUndefined();
      expect(response.data.revokeMessage.message.content).toEqual(revoked(response.data.revokeMessage.message.content.revokedAt, 'alice'));
    });

    it('answers FORBIDDEN to a member who is neither the sender nor the owner, changing nothing', async () => {
      const fromBob = await send(bob, group.id, 'bob says hi');
      const fromAlice = await send(alice, group.id, 'alice says hi');
      expect(refusal(await carol.gql(REVOKE, { messageId: fromBob.id }))).toEqual(['FORBIDDEN']);
      expect(refusal(await bob.gql(REVOKE, { messageId: fromAlice.id }))).toEqual(['FORBIDDEN']);
      expect((await carol.gql(MESSAGE, { id: fromBob.id })).data.message.content).toEqual({ __typename: 'TextContent', text: 'bob says hi' });
      expect((await carol.gql(MESSAGE, { id: fromAlice.id })).data.message.content).toEqual({ __typename: 'TextContent', text: 'alice says hi' });
    });

    it('answers NOT_FOUND to a user who is not in the conversation', async () => {
      const message = await send(bob, group.id, 'members only');
      expect(refusal(await dave.gql(REVOKE, { messageId: message.id }))).toEqual(['NOT_FOUND']);
      expect(refusal(await dave.gql(REVOKE, { messageId: 'garbage' }))).toEqual(['NOT_FOUND']);
    });

    it('lets only the sender revoke in a direct conversation, and only within the window', async () => {
      const opened = await alice.gql(OPEN_DIRECT, { userId: 'bob' });
      const direct = opened.data.openDirectConversation.conversation;
      expect(direct.kind).toBe('DIRECT');
      expect((await bob.gql(OPEN_DIRECT, { userId: 'alice' })).data.openDirectConversation.conversation.id).toBe(direct.id);
      const fromAlice = await send(alice, direct.id, 'direct from alice');
      const fromBob = await send(bob, direct.id, 'direct from bob');
      expect(refusal(await bob.gql(REVOKE, { messageId: fromAlice.id }))).toEqual(['FORBIDDEN']);
      expect(refusal(await alice.gql(REVOKE, { messageId: fromBob.id }))).toEqual(['FORBIDDEN']);
      const own = await alice.gql(REVOKE, { messageId: fromAlice.id });
      expect(own.data.revokeMessage.message.content).toEqual(revoked(own.data.revokeMessage.message.content.revokedAt, 'alice'));
      // Whoever opened it, nobody owns a direct conversation: an old message stays.
      const old = await send(alice, direct.id, 'old direct message');
      await backdate(decodeMessageId(old.id)!.convId, old.seq, 24 * 3600);
      expect(refusal(await alice.gql(REVOKE, { messageId: old.id }))).toEqual(['FORBIDDEN']);
    });

    it('returns a revoked message unchanged when it is revoked again', async () => {
      const message = await send(bob, group.id, 'revoke me twice');
      const first = await bob.gql(REVOKE, { messageId: message.id });
      const again = await bob.gql(REVOKE, { messageId: message.id });
      const byOwner = await alice.gql(REVOKE, { messageId: message.id });
      expect(first.errors).toBeUndefined();
      expect(again.data).toEqual(first.data);
      expect(byOwner.data).toEqual(first.data);
      expect(first.data.revokeMessage.message.content.revokedBy).toEqual({ id: 'bob' });
    });

    it('returns it unchanged to its sender after the window, but refuses a member who could never revoke it', async () => {
      const message = await send(bob, group.id, 'revoked, then retried late');
      const first = await bob.gql(REVOKE, { messageId: message.id });
      await backdate(group.uuid, message.seq, 3600);
      expect((await bob.gql(REVOKE, { messageId: message.id })).data).toEqual(first.data);
      expect(refusal(await carol.gql(REVOKE, { messageId: message.id }))).toEqual(['FORBIDDEN']);
    });

    describe('afterwards', () => {
      const SECRET = 'the launch code is 0451';
      let message: { id: string; seq: number };
      let clientMsgId: string;
      let expectedContent: ReturnType<typeof revoked>;
      /** Every response read after the revoke, to search for the text. */
      const responses: GraphQLResponse[] = [];
      const read = async (client: Client, query: string, variables: Record<string, unknown>) => {
        const response = await client.gql(query, variables);
        responses.push(response);
        expect(response.errors).toBeUndefined();
        return response.data;
      };

      beforeAll(async () => {
        clientMsgId = 'launch-code-1';
        message = await send(bob, group.id, SECRET, clientMsgId);
        // Neighbours on both sides, so pages hold more than the revoked message.
        await send(alice, group.id, 'after the secret');
        const response = await bob.gql(REVOKE, { messageId: message.id });
        responses.push(response);
        expect(response.errors).toBeUndefined();
        expectedContent = revoked(response.data.revokeMessage.message.content.revokedAt, 'bob');
      });

      it.each(['alice', 'bob', 'carol'])('shows RevokedContent to %s through messages, messagesAround, message and node', async (userId) => {
        const client = { alice, bob, carol }[userId as 'alice' | 'bob' | 'carol'];
        const page = (await read(client, MESSAGES, { id: group.id, last: 100 })).conversation.messages;
        expect(page.edges.find((e: Edge) => e.node.seq === message.seq).node.content).toEqual(expectedContent);
        const around = (await read(client, AROUND, { id: group.id, messageId: message.id, before: 2, after: 2 })).conversation.messagesAround;
        expect(around.anchorFound).toBe(true);
        expect(around.edges.find((e: Edge) => e.node.seq === message.seq).node.content).toEqual(expectedContent);
        const single = expectedMessage(message, group.id, 'bob', expectedContent);
        expect(await read(client, MESSAGE, { id: message.id })).toEqual({ message: single });
        expect(await read(client, NODE, { id: message.id })).toEqual({ node: { __typename: 'Message', ...single } });
      });

      it('answers a retried send with the revoked placeholder, not the text', async () => {
        const retry = await bob.gql(SEND, { conversationId: group.id, clientMsgId, text: SECRET });
        responses.push(retry);
        expect(retry.data).toEqual({
          sendMessage: { deduplicated: true, message: { id: message.id, seq: message.seq, sender: { id: 'bob' }, content: { __typename: 'RevokedContent' } } },
        });
      });

      it('never serves the original text again, and no longer stores it', async () => {
        expect(responses.length).toBeGreaterThanOrEqual(14);
        for (const response of responses) expect(response.text).not.toContain('launch code');
        const stored = rowsOf<{ n: number }>(
          await harness.database.db.execute(sql`select count(*)::int as n from message_bodies where text like '%launch code%'`),
        );
        expect(stored).toEqual([{ n: 0 }]);
      });
    });
  });

  describe('clearHistory', () => {
    let group: { id: string; uuid: string };

    beforeAll(async () => {
      group = await createGroup(alice, ['bob'], 'clears');
      await seedMessages(harness, group.uuid, 'alice', 30);
    });

    it("hides everything up to the current maxSeq from the caller only", async () => {
      const response = await bob.gql(CLEAR, { conversationId: group.id });
      expect(response.data).toEqual({ clearHistory: { clearedThroughSeq: 30, conversation: { id: group.id, maxSeq: 30 } } });
      const page = await bob.gql(MESSAGES, { id: group.id });
      expect(page.data.conversation.messages).toEqual({
        edges: [],
        pageInfo: { hasPreviousPage: false, hasNextPage: false, startCursor: null, endCursor: null },
        // The empty page still accounts for every seq: all of them are gaps for bob.
        startSeq: 1,
        endSeq: 30,
        latestSeq: 30,
        anchorFound: null,
      });
      expect(await visibleSeqs(alice, group.id)).toEqual(range(1, 30));
    });

    it('shows messages sent after the clear normally', async () => {
      const later = await send(alice, group.id, 'after the clear');
      expect(later.seq).toBe(31);
      await seedMessages(harness, group.uuid, 'alice', 2);
      expect(await visibleSeqs(bob, group.id)).toEqual([31, 32, 33]);
      const page = (await bob.gql(MESSAGES, { id: group.id, first: 1 })).data.conversation.messages;
      expect(page.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    });

    it('answers NOT_FOUND for a cleared message to the clearer, but not to others', async () => {
      const cleared = messageGlobalId(group.uuid, 12);
      expect(refusal(await bob.gql(MESSAGE, { id: cleared }))).toEqual(['NOT_FOUND']);
      expect(refusal(await bob.gql(NODE, { id: cleared }))).toEqual(['NOT_FOUND']);
      expect((await alice.gql(MESSAGE, { id: cleared })).data.message).toEqual(
        expectedMessage({ id: cleared, seq: 12 }, group.id, 'alice', { __typename: 'TextContent', text: 'message 12' }),
      );
    });

    it('moves the watermark up to the new maxSeq when cleared again', async () => {
      const response = await bob.gql(CLEAR, { conversationId: group.id });
      expect(response.data.clearHistory.clearedThroughSeq).toBe(33);
      expect(await visibleSeqs(bob, group.id)).toEqual([]);
      await send(alice, group.id, 'after the second clear');
      expect(await visibleSeqs(bob, group.id)).toEqual([34]);
    });

    it('answers NOT_FOUND to a user who is not a member', async () => {
      expect(refusal(await dave.gql(CLEAR, { conversationId: group.id }))).toEqual(['NOT_FOUND']);
      expect(await visibleSeqs(alice, group.id)).toEqual(range(1, 34));
    });
  });

  describe('markRead', () => {
    let group: { id: string; uuid: string };
    const readSeqOf = async (client: Client) => (await client.gql(CONVERSATION, { id: group.id })).data.conversation.readSeq;

    beforeAll(async () => {
      group = await createGroup(alice, ['bob'], 'reads');
      await seedMessages(harness, group.uuid, 'alice', 10);
    });

    it('moves readSeq forward and never back', async () => {
      expect(await readSeqOf(alice)).toBe(0);
      expect((await alice.gql(MARK_READ, { conversationId: group.id, seq: 5 })).data).toEqual({
        markRead: { conversation: { id: group.id, readSeq: 5 } },
      });
      expect((await alice.gql(MARK_READ, { conversationId: group.id, seq: 3 })).data.markRead.conversation.readSeq).toBe(5);
      expect((await alice.gql(MARK_READ, { conversationId: group.id, seq: 10 })).data.markRead.conversation.readSeq).toBe(10);
      expect(await readSeqOf(alice)).toBe(10);
      // Each member has their own cursor.
      expect(await readSeqOf(bob)).toBe(0);
    });

    it('refuses a seq beyond maxSeq with BAD_USER_INPUT naming seq', async () => {
      const response = await bob.gql(MARK_READ, { conversationId: group.id, seq: 11 });
      expect(refusal(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('seq');
      expect(await readSeqOf(bob)).toBe(0);
    });

    it('refuses a negative seq with BAD_USER_INPUT', async () => {
      const response = await bob.gql(MARK_READ, { conversationId: group.id, seq: -1 });
      expect(refusal(response)).toEqual(['BAD_USER_INPUT']);
      expect(await readSeqOf(bob)).toBe(0);
    });

    it('answers NOT_FOUND to a user who is not a member', async () => {
      expect(refusal(await dave.gql(MARK_READ, { conversationId: group.id, seq: 1 }))).toEqual(['NOT_FOUND']);
    });
  });

  describe('message(id) and node(id)', () => {
    let group: { id: string; uuid: string };
    const idOf = (seq: number) => messageGlobalId(group.uuid, seq);

    beforeAll(async () => {
      group = await createGroup(alice, ['bob'], 'lookups');
      await seedMessages(harness, group.uuid, 'alice', 5);
      expect((await bob.gql(DELETE_FOR_ME, { messageIds: [idOf(2)] })).data.deleteMessagesForMe.deletedCount).toBe(1);
      expect((await alice.gql(REVOKE, { messageId: idOf(3) })).errors).toBeUndefined();
    });

    it('answers a visible message in full through both', async () => {
      const expected = expectedMessage({ id: idOf(1), seq: 1 }, group.id, 'alice', { __typename: 'TextContent', text: 'message 1' });
      expect((await bob.gql(MESSAGE, { id: idOf(1) })).data).toEqual({ message: expected });
      expect((await bob.gql(NODE, { id: idOf(1) })).data).toEqual({ node: { __typename: 'Message', ...expected } });
    });

    it('answers NOT_FOUND for a message deleted for the viewer, and the message to others', async () => {
      expect(refusal(await bob.gql(MESSAGE, { id: idOf(2) }))).toEqual(['NOT_FOUND']);
      expect(refusal(await bob.gql(NODE, { id: idOf(2) }))).toEqual(['NOT_FOUND']);
      expect((await alice.gql(NODE, { id: idOf(2) })).data.node).toMatchObject({ __typename: 'Message', seq: 2 });
    });

    it('answers RevokedContent for a revoked message', async () => {
      for (const client of [alice, bob]) {
        const content = (await client.gql(MESSAGE, { id: idOf(3) })).data.message.content;
        expect(content).toEqual({ __typename: 'RevokedContent', revokedAt: expect.stringMatching(ISO_MILLIS), revokedBy: { id: 'alice' } });
        expect((await client.gql(NODE, { id: idOf(3) })).data.node.content).toEqual(content);
      }
    });

    it('keeps a message deleted for the viewer hidden after it is revoked', async () => {
      const revoke = await alice.gql(REVOKE, { messageId: idOf(2) });
      expect(revoke.data.revokeMessage.message).toMatchObject({ seq: 2, content: { __typename: 'RevokedContent', revokedBy: { id: 'alice' } } });
      expect(refusal(await bob.gql(MESSAGE, { id: idOf(2) }))).toEqual(['NOT_FOUND']);
      expect(await visibleSeqs(bob, group.id)).toEqual([1, 3, 4, 5]);
      expect((await alice.gql(MESSAGE, { id: idOf(2) })).data.message.content).toEqual(revoke.data.revokeMessage.message.content);
    });

    it('answers NOT_FOUND to a non-member exactly as for a message that does not exist', async () => {
      const notMember = [await dave.gql(MESSAGE, { id: idOf(1) }), await dave.gql(NODE, { id: idOf(1) })];
      const missing = [await alice.gql(MESSAGE, { id: idOf(99) }), await alice.gql(NODE, { id: idOf(99) })];
      for (const response of [...notMember, ...missing]) expect(refusal(response)).toEqual(['NOT_FOUND']);
      expect(notMember.map((r) => r.data)).toEqual(missing.map((r) => r.data));
      for (const response of notMember) expect(response.text).not.toContain('message 1');
    });

    it('answers the Conversation for a conversation id, to members only', async () => {
      expect((await bob.gql(NODE, { id: group.id })).data).toEqual({
        node: { __typename: 'Conversation', id: group.id, kind: 'GROUP', title: 'lookups', maxSeq: 5, readSeq: 0 },
      });
      expect(refusal(await dave.gql(NODE, { id: group.id }))).toEqual(['NOT_FOUND']);
    });

    it('answers a User for a plain user id', async () => {
      expect((await bob.gql(NODE, { id: 'someone-new' })).data).toEqual({ node: { __typename: 'User', id: 'someone-new' } });
      expect((await bob.gql(NODE, { id: 'alice' })).data).toEqual({ node: { __typename: 'User', id: 'alice' } });
    });
  });
});

/** A message exactly as the MESSAGE selection reads it. */
function expectedMessage(message: { id: string; seq: number }, conversationId: string, senderId: string, content: unknown) {
  return { id: message.id, seq: message.seq, sender: { id: senderId }, conversation: { id: conversationId }, content };
}
