import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { AROUND, CLEAR, createGroup, DELETE_FOR_ME, type Edge, MESSAGES, MESSAGES_AROUND } from '../helpers/operations.ts';

/** A real message id with its seq edited from `seq` to `to` and the checksum left as it was. */
function tamperedMessageId(convId: string, seq: number, to: number): string {
  const text = Buffer.from(messageGlobalId(convId, seq), 'base64url').toString('utf8');
  return Buffer.from(text.replace(`:${seq}:`, `:${to}:`), 'utf8').toString('base64url');
}

/** Consecutive seqs from `from` to `to`, both included. */
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.each(backends)('Jumps to a message with messagesAround (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  /** 300 seeded messages from alice; alice (owner), bob and carol are members. */
  let conv: { id: string; uuid: string };
  /** A second conversation of the same members, for foreign anchors. */
  let other: { id: string; uuid: string };

  const seqsOf = (edges: Edge[]) => edges.map((e) => e.node.seq);
  const idOf = (seq: number, uuid = conv.uuid) => messageGlobalId(uuid, seq);
  const around = (anchorSeq: number, sides: { before?: number; after?: number } = {}, client = alice) =>
    client.gql(AROUND, { id: conv.id, messageId: idOf(anchorSeq), ...sides });
  const connectionOf = async (request: ReturnType<typeof around>) => {
    const response = await request;
    expect(response.errors).toBeUndefined();
    return response.data.conversation.messagesAround;
  };
  /** A seeded message's edge exactly as the page selection reads it. */
  const seededEdge = (seq: number, uuid = conv.uuid) => ({
    cursor: encodeCursor(uuid, seq),
    node: { id: messageGlobalId(uuid, seq), seq, sender: { id: 'alice' }, content: { __typename: 'TextContent', text: `message ${seq}` } },
  });
  /** The whole connection a jump should answer for visible `seqs`. */
  const expectedConnection = (
    seqs: number[],
    flags: { hasPreviousPage: boolean; hasNextPage: boolean },
    anchor: { seq: number; found: boolean },
    latestSeq = 300,
    uuid = conv.uuid,
  ) => ({
    edges: seqs.map((seq) => seededEdge(seq, uuid)),
    pageInfo: {
      ...flags,
      startCursor: encodeCursor(uuid, seqs[0] ?? anchor.seq),
      endCursor: encodeCursor(uuid, seqs.at(-1) ?? anchor.seq),
    },
    // The span the page accounts for: to its edges (or the anchor) where more
    // lies beyond, to the ends of the history where nothing does.
    startSeq: flags.hasPreviousPage ? (seqs[0] ?? anchor.seq) : 1,
    endSeq: flags.hasNextPage ? (seqs.at(-1) ?? anchor.seq) : latestSeq,
    latestSeq,
    anchorFound: anchor.found,
  });

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    conv = await createGroup(alice, ['bob', 'carol']);
    other = await createGroup(alice, ['bob', 'carol'], 'other');
    await seedMessages(harness, conv.uuid, 'alice', 300);
    await seedMessages(harness, other.uuid, 'alice', 10);
    // Bob's own view: seq 200 deleted for him, and a few on either side of 100.
    const hidden = [200, 95, 96, 97, 98, 99, 101, 102, 103];
    const hide = await bob.gql(DELETE_FOR_ME, { messageIds: hidden.map((seq) => idOf(seq)) });
    expect(hide.data).toEqual({ deleteMessagesForMe: { deletedCount: hidden.length } });
  });
  afterAll(() => harness.close());

  describe('the page', () => {
    it('holds 20 older, the anchor and 20 newer when before and after are left out', async () => {
      expect(await connectionOf(around(150))).toEqual(
        expectedConnection(range(130, 170), { hasPreviousPage: true, hasNextPage: true }, { seq: 150, found: true }),
      );
    });

    it('holds exactly the requested counts on each side', async () => {
      expect(await connectionOf(around(150, { before: 2, after: 7 }))).toEqual(
        expectedConnection(range(148, 157), { hasPreviousPage: true, hasNextPage: true }, { seq: 150, found: true }),
      );
    });

    it('holds only the anchor for before: 0 and after: 0, its cursor on both ends', async () => {
      expect(await connectionOf(around(150, { before: 0, after: 0 }))).toEqual(
        expectedConnection([150], { hasPreviousPage: true, hasNextPage: true }, { seq: 150, found: true }),
      );
      expect(await connectionOf(around(1, { before: 0, after: 0 }))).toEqual(
        expectedConnection([1], { hasPreviousPage: false, hasNextPage: true }, { seq: 1, found: true }),
      );
      expect(await connectionOf(around(300, { before: 0, after: 0 }))).toEqual(
        expectedConnection([300], { hasPreviousPage: true, hasNextPage: false }, { seq: 300, found: true }),
      );
    });

    it('is shorter on the old side at the oldest message: before 5, after 5 gives 6 messages', async () => {
      expect(await connectionOf(around(1, { before: 5, after: 5 }))).toEqual(
        expectedConnection(range(1, 6), { hasPreviousPage: false, hasNextPage: true }, { seq: 1, found: true }),
      );
    });

    it('is shorter on the new side at the newest message: before 5, after 5 gives 6 messages', async () => {
      expect(await connectionOf(around(300, { before: 5, after: 5 }))).toEqual(
        expectedConnection(range(295, 300), { hasPreviousPage: true, hasNextPage: false }, { seq: 300, found: true }),
      );
    });

    it('reports exact flags when a side holds exactly N and when it holds N + 1', async () => {
      // Exactly 5 older than 6 and exactly 5 newer than 295: nothing more either way.
      expect((await connectionOf(around(6, { before: 5, after: 0 }))).pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
      expect((await connectionOf(around(295, { before: 0, after: 5 }))).pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
      // One more on that side.
      expect((await connectionOf(around(7, { before: 5, after: 0 }))).pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
      expect((await connectionOf(around(294, { before: 0, after: 5 }))).pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
      // Sides of 100 that reach exactly to either end.
      expect(await connectionOf(around(101, { before: 100, after: 100 }))).toEqual(
        expectedConnection(range(1, 201), { hasPreviousPage: false, hasNextPage: true }, { seq: 101, found: true }),
      );
      expect(await connectionOf(around(200, { before: 100, after: 100 }))).toEqual(
        expectedConnection(range(100, 300), { hasPreviousPage: true, hasNextPage: false }, { seq: 200, found: true }),
      );
    });
  });

  describe('continuing through messages', () => {
    /** The seqs of `messages(variables)` for `client`. */
    const pageSeqs = async (variables: Record<string, unknown>, client = alice) => {
      const response = await client.gql(MESSAGES, { id: conv.id, ...variables });
      expect(response.errors).toBeUndefined();
      return seqsOf(response.data.conversation.messages.edges);
    };

    it('goes on with the exact next messages from startCursor (before) and endCursor (after)', async () => {
      const page = await connectionOf(around(150, { before: 5, after: 5 }));
      expect(seqsOf(page.edges)).toEqual(range(145, 155));
      expect(await pageSeqs({ last: 10, before: page.pageInfo.startCursor })).toEqual(range(135, 144));
      expect(await pageSeqs({ first: 10, after: page.pageInfo.endCursor })).toEqual(range(156, 165));
    });

    it('goes on from a page that holds only the anchor', async () => {
      const page = await connectionOf(around(150, { before: 0, after: 0 }));
      expect(await pageSeqs({ last: 3, before: page.pageInfo.startCursor })).toEqual([147, 148, 149]);
      expect(await pageSeqs({ first: 3, after: page.pageInfo.endCursor })).toEqual([151, 152, 153]);
    });

    it('goes on past messages hidden from the viewer, without gaps or repeats', async () => {
      const page = await connectionOf(around(100, { before: 5, after: 5 }, bob));
      expect(seqsOf(page.edges)).toEqual([90, 91, 92, 93, 94, 100, 104, 105, 106, 107, 108]);
      expect(await pageSeqs({ last: 5, before: page.pageInfo.startCursor }, bob)).toEqual(range(85, 89));
      expect(await pageSeqs({ first: 5, after: page.pageInfo.endCursor }, bob)).toEqual(range(109, 113));
    });

    it('goes on from the cursors of an empty page around a hidden anchor', async () => {
      const page = await connectionOf(around(200, { before: 0, after: 0 }, bob));
      expect(page).toEqual(
        expectedConnection([], { hasPreviousPage: true, hasNextPage: true }, { seq: 200, found: false }),
      );
      expect(await pageSeqs({ last: 2, before: page.pageInfo.startCursor }, bob)).toEqual([198, 199]);
      expect(await pageSeqs({ first: 2, after: page.pageInfo.endCursor }, bob)).toEqual([201, 202]);
    });
  });

  describe('an anchor the viewer cannot see', () => {
    it('centres the page on a message deleted for the viewer, with anchorFound false', async () => {
      expect(await connectionOf(around(200, { before: 3, after: 3 }, bob))).toEqual(
        expectedConnection([197, 198, 199, 201, 202, 203], { hasPreviousPage: true, hasNextPage: true }, { seq: 200, found: false }),
      );
    });

    it('still answers anchorFound true to the other members', async () => {
      for (const member of [alice, carol]) {
        expect(await connectionOf(around(200, { before: 3, after: 3 }, member))).toEqual(
          expectedConnection(range(197, 203), { hasPreviousPage: true, hasNextPage: true }, { seq: 200, found: true }),
        );
      }
    });

    it('keeps both sides full when messages next to the anchor are hidden', async () => {
      // Bob hid 95..99 and 101..103: the sides reach further instead of coming back short.
      expect(await connectionOf(around(100, { before: 5, after: 5 }, bob))).toEqual(
        expectedConnection([90, 91, 92, 93, 94, 100, 104, 105, 106, 107, 108], { hasPreviousPage: true, hasNextPage: true }, { seq: 100, found: true }),
      );
      // Centred on a hidden anchor among hidden neighbours.
      expect(await connectionOf(around(98, { before: 2, after: 2 }, bob))).toEqual(
        expectedConnection([93, 94, 100, 104], { hasPreviousPage: true, hasNextPage: true }, { seq: 98, found: false }),
      );
    });

    describe('because of cleared history or a message that is gone', () => {
      let cleared: { id: string; uuid: string };
      const aroundIn = (client: Client, anchorSeq: number, before: number, after: number) =>
        client.gql(AROUND, { id: cleared.id, messageId: idOf(anchorSeq, cleared.uuid), before, after });

      beforeAll(async () => {
        cleared = await createGroup(alice, ['bob'], 'cleared');
        await seedMessages(harness, cleared.uuid, 'alice', 10);
        const clear = await bob.gql(CLEAR, { conversationId: cleared.id });
        expect(clear.data.clearHistory.clearedThroughSeq).toBe(10);
        await seedMessages(harness, cleared.uuid, 'alice', 10);
        // A message that is gone for everyone (as a retention purge leaves it): its seq was allocated.
        await harness.database.db.execute(sql`delete from message_bodies where conv_id = ${cleared.uuid} and seq = 15`);
        await harness.database.db.execute(sql`delete from messages where conv_id = ${cleared.uuid} and seq = 15`);
      });

      it('centres the page on an anchor below the viewer\'s clear watermark', async () => {
        expect(await connectionOf(aroundIn(bob, 10, 3, 3))).toEqual(
          expectedConnection([11, 12, 13], { hasPreviousPage: false, hasNextPage: true }, { seq: 10, found: false }, 20, cleared.uuid),
        );
        expect(await connectionOf(aroundIn(bob, 4, 3, 0))).toEqual(
          expectedConnection([], { hasPreviousPage: false, hasNextPage: true }, { seq: 4, found: false }, 20, cleared.uuid),
        );
      });

      it('answers the uncleared view to the member who did not clear', async () => {
        expect(await connectionOf(aroundIn(alice, 10, 3, 3))).toEqual(
          expectedConnection(range(7, 13), { hasPreviousPage: true, hasNextPage: true }, { seq: 10, found: true }, 20, cleared.uuid),
        );
      });

      it('centres the page on a message that is gone, for every member', async () => {
        for (const member of [alice, bob]) {
          expect(await connectionOf(aroundIn(member, 15, 3, 3))).toEqual(
            expectedConnection([12, 13, 14, 16, 17, 18], { hasPreviousPage: true, hasNextPage: true }, { seq: 15, found: false }, 20, cleared.uuid),
          );
        }
      });
    });
  });

  describe('as messages(around:), one request a stock relay-style client merges', () => {
    const jump = (anchorId: string, sides: { first?: number | null; last?: number | null; after?: string; before?: string }, client = alice) =>
      client.gql(MESSAGES_AROUND, { id: conv.id, around: anchorId, ...sides });

    it('answers what messagesAround answers, last older and first newer, anchorFound included', async () => {
      for (const [client, anchorSeq, last, first] of [
        [alice, 150, 3, 7],
        [alice, 1, 5, 5],
        [alice, 300, 100, 0],
        [bob, 200, 4, 4], // deleted for bob: anchorFound false
        [bob, 100, 3, 3], // hidden neighbours on both sides
      ] as const) {
        const viaMessages = await jump(idOf(anchorSeq), { first, last }, client);
        const viaAround = await around(anchorSeq, { before: last, after: first }, client);
        expect(viaMessages.errors).toBeUndefined();
        expect(viaMessages.data.conversation.messages).toEqual(viaAround.data.conversation.messagesAround);
      }
      const hidden = await jump(idOf(200), { first: 2, last: 2 }, bob);
      expect([hidden.data.conversation.messages.anchorFound, seqsOf(hidden.data.conversation.messages.edges)]).toEqual([false, [198, 199, 201, 202]]);
    });

    it('takes 10 a side when neither side is given, and starts or ends at the anchor when only one is', async () => {
      expect(seqsOf((await jump(idOf(150), {})).data.conversation.messages.edges)).toEqual(range(140, 160));
      expect(seqsOf((await jump(idOf(150), { first: 4 })).data.conversation.messages.edges)).toEqual(range(150, 154));
      expect(seqsOf((await jump(idOf(150), { last: 4 })).data.conversation.messages.edges)).toEqual(range(146, 150));
    });

    it('pages on from a jump with the jump\'s own variables plus a cursor: the cursor decides', async () => {
      const start = (await jump(idOf(150), { first: 5, last: 5 })).data.conversation.messages;
      const older = await jump(idOf(150), { last: 5, first: null, before: start.pageInfo.startCursor });
      const newer = await jump(idOf(150), { first: 5, last: null, after: start.pageInfo.endCursor });
      expect([seqsOf(older.data.conversation.messages.edges), seqsOf(newer.data.conversation.messages.edges)]).toEqual([range(140, 144), range(156, 160)]);
      // Exactly the pages `messages` answers without `around`.
      const plain = await alice.gql(MESSAGES, { id: conv.id, last: 5, before: start.pageInfo.startCursor });
      expect(older.data.conversation.messages).toEqual(plain.data.conversation.messages);
      expect(older.data.conversation.messages.anchorFound).toBeNull();
    });

    it('refuses a side outside 0 to 100 naming it, and an anchor of another conversation with NOT_FOUND', async () => {
      for (const [name, value] of [['first', 101], ['last', -1]] as const) {
        const response = await jump(idOf(150), { [name]: value });
        expect([codes(response), response.errors![0]!.extensions!.argumentName]).toEqual([['BAD_USER_INPUT'], name]);
      }
      expect(codes(await jump(messageGlobalId(other.uuid, 5), {}))).toEqual(['NOT_FOUND']);
      expect(codes(await jump(messageGlobalId(conv.uuid, 301), {}))).toEqual(['NOT_FOUND']);
      const dave = await harness.client('dave');
      expect(codes(await jump(idOf(150), {}, dave))).toEqual(['NOT_FOUND']);
    });

    it('costs the statements a messagesAround jump costs', async () => {
      const response = await jump(idOf(150), { first: 20, last: 20 });
      expect([response.stats.statements, response.stats.batches]).toEqual([1, []]);
    });
  });

  describe('refusals', () => {
    it.each([
      ['before', -1],
      ['before', 101],
      ['after', -1],
      ['after', 101],
    ])('refuses %s: %i with BAD_USER_INPUT naming the argument', async (argumentName, value) => {
      const response = await around(150, { [argumentName]: value });
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe(argumentName);
      expect(response.data).toEqual({ conversation: null });
    });

    it('takes an explicit null for before or after as the default 20', async () => {
      const response = await alice.gql(AROUND, { id: conv.id, messageId: idOf(150), before: null, after: null });
      expect(seqsOf(response.data.conversation.messagesAround.edges)).toEqual(range(130, 170));
    });

    it('accepts the limits 0 and 100 on both sides', async () => {
      const response = await around(150, { before: 100, after: 0 });
      expect(seqsOf(response.data.conversation.messagesAround.edges)).toEqual(range(50, 150));
      const other = await around(150, { before: 0, after: 100 });
      expect(seqsOf(other.data.conversation.messagesAround.edges)).toEqual(range(150, 250));
    });

    it.each([
      ['a message of another conversation', () => messageGlobalId(other.uuid, 5)],
      ['a conversation id', () => conv.id],
      ['the conversation id of another conversation', () => other.id],
      ['a garbage id', () => 'not-an-id'],
      ['an empty id', () => ''],
      ['a message id whose seq was never allocated', () => messageGlobalId(conv.uuid, 301)],
      ['a message id far beyond maxSeq', () => messageGlobalId(conv.uuid, 1_000_000)],
      ['a message id with seq 0', () => messageGlobalId(conv.uuid, 0)],
      ['a message id with an edited seq', () => tamperedMessageId(conv.uuid, 150, 151)],
    ])('answers NOT_FOUND for an anchor that is %s', async (_what, anchorId) => {
      const response = await alice.gql(AROUND, { id: conv.id, messageId: anchorId(), before: 5, after: 5 });
      expect(codes(response)).toEqual(['NOT_FOUND']);
      expect(response.data).toEqual({ conversation: null });
    });

    it('answers NOT_FOUND to a user who is not a member, with no message text', async () => {
      const dave = await harness.client('dave');
      const response = await dave.gql(AROUND, { id: conv.id, messageId: idOf(150), before: 5, after: 5 });
      expect(codes(response)).toEqual(['NOT_FOUND']);
      expect(response.data).toEqual({ conversation: null });
      expect(response.text).not.toContain('message 150');
    });
  });

  describe('cost', () => {
    it('runs one SQL statement, bodies included, for sides of 1, 20 and 100', async () => {
      const counts: number[] = [];
      for (const size of [1, 20, 100]) {
        const response = await around(150, { before: size, after: size });
        expect(response.errors).toBeUndefined();
        expect(response.data.conversation.messagesAround.edges).toHaveLength(2 * size + 1);
        counts.push(response.stats.statements);
        expect(response.stats.batches).toEqual([]);
      }
      expect(counts).toEqual([1, 1, 1]);
    });

    it('costs the same around a hidden anchor', async () => {
      const response = await around(200, { before: 50, after: 50 }, bob);
      expect(response.data.conversation.messagesAround.edges).toHaveLength(100);
      expect(response.stats.statements).toBe(1);
      expect(response.stats.batches).toEqual([]);
    });
  });
});
