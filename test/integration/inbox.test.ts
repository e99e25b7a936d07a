import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { conversationGlobalId, decodeConversationId } from '../../src/history/globalId.ts';
import { encodeInboxCursor } from '../../src/history/inboxCursor.ts';
import { reindexInbox } from '../../src/store/inboxIndex.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type GraphQLResponse, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, MARK_READ, MESSAGES, REVOKE, send } from '../helpers/operations.ts';

const LAST_MESSAGE_FIELDS = `seq content { __typename ... on TextContent { text } } readCount sender { id }`;

/** The inbox page the issue names, plus the edge cursors and page info. */
const INBOX = `query Inbox($first: Int, $after: String) {
  viewer { conversations(first: $first, after: $after) {
    edges { cursor node { id title lastActivityAt unreadCount unreadCountCapped lastMessage { ${LAST_MESSAGE_FIELDS} } } }
    pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
  } }
}`;

/** Only the ids, for walks. */
const INBOX_IDS = `query Inbox($first: Int, $after: String) {
  viewer { conversations(first: $first, after: $after) { edges { node { id } } pageInfo { hasPreviousPage hasNextPage endCursor } } }
}`;

const CONVERSATION = `query Conversation($id: ID!) {
  conversation(id: $id) { lastActivityAt unreadCount unreadCountCapped lastMessage { ${LAST_MESSAGE_FIELDS} } }
}`;

const READ_COUNTS = `query ReadCounts($id: ID!) { conversation(id: $id) { messages(first: 100) { edges { node { seq readCount } } } } }`;

const OPEN_DIRECT = `mutation Open($userId: ID!) { openDirectConversation(userId: $userId) { conversation { id } } }`;

const SET_RETENTION = `mutation Retain($conversationId: ID!, $days: Int) {
  setRetentionPolicy(input: { conversationId: $conversationId, days: $days }) { conversation { id } }
}`;

interface InboxNode {
  id: string;
  title: string | null;
  lastActivityAt: string;
  unreadCount: number;
  unreadCountCapped: boolean;
  lastMessage: { seq: number; content: { __typename: string; text?: string }; readCount: number; sender: { id: string } } | null;
}

/** `micros` since the epoch as an ISO 8601 timestamp with microseconds. */
const isoMicros = (micros: number) =>
  new Date(Math.floor(micros / 1000)).toISOString().replace('Z', `${String(micros % 1000).padStart(3, '0')}Z`);

const SOME_CONV = '3f2c8a9e-1b4d-4c6e-9f00-a1b2c3d4e5f6';
const inboxCursor = encodeInboxCursor({ activityMicros: 1_796_044_223_123_456, convId: SOME_CONV });
/** `inboxCursor` with its last character changed. */
const tamperedInboxCursor = inboxCursor.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));

const text = (value: string) => ({ __typename: 'TextContent', text: value });
const unread = (unreadCount: number, unreadCountCapped = false) => ({ unreadCount, unreadCountCapped });

describe.each(backends)('The inbox (%s)', (backend) => {
  let harness: Harness;
  let nextUser = 0;

  /** A user no other test has used, so each test's inbox holds only its own conversations. */
  const freshUser = (name: string) => harness.client(`${name}-${nextUser++}`);

  const inbox = async (client: Client, variables: { first?: number; after?: string | null } = {}) => {
    const response = await client.gql(INBOX, variables);
    expect(response.errors).toBeUndefined();
    return response.data.viewer.conversations as { edges: { cursor: string; node: InboxNode }[]; pageInfo: Record<string, unknown> };
  };
  const nodes = async (client: Client, first = 100) => (await inbox(client, { first })).edges.map((e) => e.node);
  const nodeOf = async (client: Client, id: string) => {
    const response = await client.gql(CONVERSATION, { id });
    expect(response.errors).toBeUndefined();
    return response.data.conversation;
  };

  /**
   * Inserts groups owned by `ownerId` with `memberIds`, with the given activity
   * times, in one statement per table (fixtures for the paging tests); returns
   * their uuids in the order given.
   */
  const seedGroups = async (ownerId: string, memberIds: string[], activity: number[]): Promise<string[]> => {
    const ids = activity.map(() => randomUUID());
    await harness.database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into conversations (id, kind, title, last_activity_at)
        select c.id, 'group', 'seeded', c.at
        from unnest(${sql.param(ids)}::uuid[], ${sql.param(activity.map(isoMicros))}::text[]::timestamptz[]) as c(id, at)`);
      await tx.execute(sql`insert into members (conv_id, user_id, role)
        select c.id, u.user_id, case when u.user_id = ${ownerId} then 'owner' else 'member' end
        from unnest(${sql.param(ids)}::uuid[]) as c(id), unnest(${sql.param([ownerId, ...memberIds])}::text[]) as u(user_id)`);
      await tx.execute(reindexInbox(ids));
    });
    return ids;
  };
  /** Inserts `count` messages from `senderId` into each of `convIds`, keeping their activity times. */
  const seedMessagesInto = async (convIds: string[], senderId: string, count: number) => {
    await harness.database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id)
        select c.id, g, ${senderId}, 'seed-' || g from unnest(${sql.param(convIds)}::uuid[]) as c(id), generate_series(1, ${count}) g`);
      await tx.execute(sql`insert into message_bodies (conv_id, seq, text)
        select c.id, g, 'message ' || g from unnest(${sql.param(convIds)}::uuid[]) as c(id), generate_series(1, ${count}) g`);
      await tx.execute(sql`update conversations set max_seq = ${count} where id = any(${sql.param(convIds)}::uuid[])`);
    });
  };
  /**
   * Activity times for `count` conversations, in microseconds, newest first,
   * each shared by `tied` of them: a minute ago and one microsecond apart, all
   * inside one millisecond, so a cursor that kept only milliseconds would
   * skip and repeat.
   */
  const activityTimes = (count: number, tied: number) => {
    const base = (Date.now() - 60_000) * 1000 + 999;
    return Array.from({ length: count }, (_, i) => base - Math.floor(i / tied));
  };
  /** Inbox order of seeded groups: activity desc, then id desc (uuids compare as their lower-case text does). */
  const inboxOrder = (ids: string[], activity: number[]) =>
    ids
      .map((id, i) => ({ id, at: activity[i]! }))
      .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
      .map((e) => conversationGlobalId(e.id));
  /** Every conversation id of `client`'s inbox, `first` at a time, with what happens between pages. */
  const walk = async (client: Client, first: number, betweenPages: (page: number) => Promise<void> = async () => {}) => {
    const ids: string[] = [];
    const flags: unknown[] = [];
    let after: string | null = null;
    for (let page = 1; ; page++) {
      const response: GraphQLResponse = await client.gql(INBOX_IDS, { first, after });
      expect(response.errors).toBeUndefined();
      const connection = response.data.viewer.conversations;
      ids.push(...connection.edges.map((e: { node: { id: string } }) => e.node.id));
      flags.push([connection.pageInfo.hasPreviousPage, connection.pageInfo.hasNextPage]);
      if (!connection.pageInfo.hasNextPage) return { ids, flags };
      // A cursor that loses its place would walk forever; these inboxes end within 10 pages.
      if (page === 10) throw new Error(`The walk did not end after ${page} pages of ${first}.`);
      after = connection.pageInfo.endCursor;
      await betweenPages(page);
    }
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
  });
  afterAll(() => harness.close());

  describe('Viewer', () => {
    it('answers the viewer as a User', async () => {
      const alice = await freshUser('alice');
      const response = await alice.gql('{ viewer { id user { id } } }');
      expect(response.data).toEqual({ viewer: { id: alice.userId, user: { id: alice.userId } } });
    });
  });

  describe('Order', () => {
    it('lists conversations most recent activity first, and a sent message moves its conversation to the top', async () => {
      const alice = await freshUser('alice');
      const first = await createGroup(alice, [], 'first');
      const second = await createGroup(alice, [], 'second');
      const third = await createGroup(alice, [], 'third');
      expect((await nodes(alice)).map((n) => n.title)).toEqual(['third', 'second', 'first']);

      await send(alice, first.id, 'hello');
      const after = await nodes(alice);
      expect(after.map((n) => n.title)).toEqual(['first', 'third', 'second']);
      const sent = await alice.gql(MESSAGES, { id: first.id, last: 1 });
      const createdAt = (await alice.gql(`query ($id: ID!) { message(id: $id) { createdAt } }`, {
        id: sent.data.conversation.messages.edges[0].node.id,
      })).data.message.createdAt;
      expect(after[0]!.lastActivityAt).toBe(createdAt);
      expect(after.map((n) => n.id)).toEqual([first.id, third.id, second.id]);
    });

    it('answers an empty page for a user in no conversation', async () => {
      const nobody = await freshUser('nobody');
      expect(await inbox(nobody)).toEqual({
        edges: [],
        pageInfo: { hasPreviousPage: false, hasNextPage: false, startCursor: null, endCursor: null },
      });
    });

    it('never lists a conversation the viewer is not a member of', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const carol = await freshUser('carol');
      const shared = await createGroup(alice, [bob.userId], 'shared');
      await createGroup(alice, [], 'alice alone');
      await createGroup(carol, [], 'carol alone');
      await send(alice, shared.id, 'for bob');
      expect((await nodes(bob)).map((n) => n.id)).toEqual([shared.id]);
      expect((await nodes(carol)).map((n) => n.title)).toEqual(['carol alone']);
    });
  });

  describe('Keyset paging', () => {
    it('walks more than 100 conversations, ties on activity broken by id, with exact flags and no repeats or skips', async () => {
      const viewer = await freshUser('walker');
      // 120 conversations, ten to each activity time: pages of 40 end exactly at the last one.
      const activity = activityTimes(120, 10);
      const ids = await seedGroups(viewer.userId, [], activity);
      const { ids: walked, flags } = await walk(viewer, 40);
      expect(walked).toEqual(inboxOrder(ids, activity));
      expect(flags).toEqual([
        [false, true],
        [true, true],
        [true, false],
      ]);
      const largest = await inbox(viewer, { first: 100 });
      expect(largest.edges).toHaveLength(100);
      expect(largest.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    });

    it('repeats nothing while new messages arrive between pages; only a conversation moved above the walk is missed', async () => {
      const viewer = await freshUser('walker');
      const activity = activityTimes(110, 3);
      const ids = await seedGroups(viewer.userId, [], activity);
      const order = inboxOrder(ids, activity);
      const onFirstPage = order[5]!;
      const onLastPage = order[100]!;
      const { ids: walked } = await walk(viewer, 30, async (page) => {
        if (page !== 1) return;
        // Both jump to the top, behind the walk: one was already seen, the other will not be.
        await send(viewer, onFirstPage, 'again');
        await send(viewer, onLastPage, 'moved up');
      });
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked).toEqual(order.filter((id) => id !== onLastPage));
    });

    it('continues from a cursor whose conversation has since moved: the cursor names a position, not a row', async () => {
      const viewer = await freshUser('walker');
      const activity = activityTimes(6, 1);
      const ids = await seedGroups(viewer.userId, [], activity);
      const order = inboxOrder(ids, activity);
      const page = await inbox(viewer, { first: 2 });
      await send(viewer, order[1]!, 'moves to the top');
      const next = await inbox(viewer, { first: 2, after: page.pageInfo.endCursor as string });
      expect(next.edges.map((e) => e.node.id)).toEqual(order.slice(2, 4));
    });

    it.each([
      ['garbage', 'not-a-cursor'],
      ['a message page cursor', encodeCursor(SOME_CONV, 5)],
      ['an inbox cursor with one character changed', tamperedInboxCursor],
    ])('refuses %s as `after` with BAD_USER_INPUT naming after', async (_name, after) => {
      const viewer = await freshUser('viewer');
      const response = await viewer.gql(INBOX, { after });
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('after');
      expect(response.data).toBeNull();
    });

    it.each([0, 101, -1])('refuses first: %i with BAD_USER_INPUT naming first', async (first) => {
      const viewer = await freshUser('viewer');
      const response = await viewer.gql(INBOX, { first });
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('first');
    });
  });

  describe('lastMessage', () => {
    it('is null in a conversation without messages', async () => {
      const alice = await freshUser('alice');
      const group = await createGroup(alice, []);
      expect((await nodeOf(alice, group.id)).lastMessage).toBeNull();
    });

    it('shows a revoked last message as RevokedContent, and skips one the viewer hid', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const group = await createGroup(alice, [bob.userId]);
      await send(alice, group.id, 'one');
      await send(alice, group.id, 'two');
      const three = await send(alice, group.id, 'three');
      await alice.gql(REVOKE, { messageId: three.id });
      const hidden = await bob.gql(DELETE_FOR_ME, { messageIds: [three.id] });
      expect(hidden.data.deleteMessagesForMe.deletedCount).toBe(1);

      const revoked = { seq: 3, content: { __typename: 'RevokedContent' }, readCount: 0, sender: { id: alice.userId } };
      expect((await nodes(alice))[0]!.lastMessage).toEqual(revoked);
      expect((await nodes(bob))[0]!.lastMessage).toEqual({ seq: 2, content: text('two'), readCount: 0, sender: { id: alice.userId } });
    });

    it('skips cleared and expired messages', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const cleared = await createGroup(alice, [bob.userId], 'cleared');
      await send(alice, cleared.id, 'before the clear');
      await bob.gql(CLEAR, { conversationId: cleared.id });
      expect(await nodeOf(bob, cleared.id)).toMatchObject({ lastMessage: null, ...unread(0) });
      await send(alice, cleared.id, 'after the clear');
      expect(await nodeOf(bob, cleared.id)).toMatchObject({ lastMessage: { seq: 2, content: text('after the clear') }, ...unread(1) });

      const expiring = await createGroup(alice, [bob.userId], 'expiring');
      await send(alice, expiring.id, 'old news');
      await harness.database.db.execute(
        sql`update messages set created_at = now() - interval '3 days' where conv_id = ${decodeConversationId(expiring.id)}`,
      );
      const policy = await alice.gql(SET_RETENTION, { conversationId: expiring.id, days: 1 });
      expect(policy.errors).toBeUndefined();
      expect(await nodeOf(bob, expiring.id)).toMatchObject({ lastMessage: null, ...unread(0) });
    });
  });

  describe('unreadCount', () => {
    it('counts exactly up to 99 and reports 99, capped, past that; never counts your own messages', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const sizes = [0, 5, 99, 100, 250];
      for (const size of sizes) {
        const group = await createGroup(alice, [bob.userId], `${size} messages`);
        if (size > 0) await seedMessages(harness, group.uuid, alice.userId, size);
      }
      const byTitle = (list: InboxNode[]) =>
        Object.fromEntries(list.map((n) => [n.title, { unreadCount: n.unreadCount, unreadCountCapped: n.unreadCountCapped }]));
      expect(byTitle(await nodes(bob))).toEqual({
        '0 messages': unread(0),
        '5 messages': unread(5),
        '99 messages': unread(99),
        '100 messages': unread(99, true),
        '250 messages': unread(99, true),
      });
      expect(Object.values(byTitle(await nodes(alice)))).toEqual(sizes.map(() => unread(0)));
    });

    it('goes down as markRead moves the read cursor', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const small = await createGroup(alice, [bob.userId]);
      await seedMessages(harness, small.uuid, alice.userId, 5);
      const large = await createGroup(alice, [bob.userId]);
      await seedMessages(harness, large.uuid, alice.userId, 250);

      const unreadAfter = async (group: { id: string }, seq: number) => {
        const marked = await bob.gql(MARK_READ, { conversationId: group.id, seq });
        expect(marked.errors).toBeUndefined();
        const { unreadCount, unreadCountCapped } = await nodeOf(bob, group.id);
        return { unreadCount, unreadCountCapped };
      };
      expect([await unreadAfter(small, 3), await unreadAfter(small, 5)]).toEqual([unread(2), unread(0)]);
      expect([await unreadAfter(large, 100), await unreadAfter(large, 151), await unreadAfter(large, 200)]).toEqual([
        unread(99, true),
        unread(99),
        unread(50),
      ]);
    });

    it("counts only others' messages the viewer can see: not their own, not hidden ones", async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const group = await createGroup(alice, [bob.userId]);
      await seedMessages(harness, group.uuid, alice.userId, 5);
      await send(bob, group.id, 'mine');
      await send(bob, group.id, 'mine too');
      expect([await nodeOf(alice, group.id), await nodeOf(bob, group.id)]).toMatchObject([unread(2), unread(5)]);
      const page = await bob.gql(MESSAGES, { id: group.id, first: 2 });
      await bob.gql(DELETE_FOR_ME, { messageIds: page.data.conversation.messages.edges.map((e: { node: { id: string } }) => e.node.id) });
      expect(await nodeOf(bob, group.id)).toMatchObject(unread(3));
    });
  });

  describe('readCount', () => {
    it('counts the members other than the sender who have read a message, as they mark read', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const carol = await freshUser('carol');
      const dave = await freshUser('dave');
      const group = await createGroup(alice, [bob.userId, carol.userId, dave.userId]);
      for (const word of ['one', 'two', 'three']) await send(alice, group.id, word);
      const readCounts = async () => {
        const response = await dave.gql(READ_COUNTS, { id: group.id });
        // Counted by the page statement: one statement, no batch.
        expect({ statements: response.stats.statements, batches: response.stats.batches }).toEqual({ statements: 1, batches: [] });
        return response.data.conversation.messages.edges.map((e: { node: { readCount: number } }) => e.node.readCount);
      };
      expect(await readCounts()).toEqual([0, 0, 0]);
      await bob.gql(MARK_READ, { conversationId: group.id, seq: 2 });
      expect(await readCounts()).toEqual([1, 1, 0]);
      await carol.gql(MARK_READ, { conversationId: group.id, seq: 3 });
      expect(await readCounts()).toEqual([2, 2, 1]);
      // The sender's own cursor is no receipt.
      await alice.gql(MARK_READ, { conversationId: group.id, seq: 3 });
      expect(await readCounts()).toEqual([2, 2, 1]);
    });

    it('counts the other side of a direct conversation', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const opened = await alice.gql(OPEN_DIRECT, { userId: bob.userId });
      const id = opened.data.openDirectConversation.conversation.id as string;
      await send(alice, id, 'hi');
      expect((await nodeOf(alice, id)).lastMessage.readCount).toBe(0);
      await bob.gql(MARK_READ, { conversationId: id, seq: 1 });
      expect((await nodeOf(alice, id)).lastMessage.readCount).toBe(1);
    });

    it('counts each conversation of an inbox page by its own members, in one batch, whoever sent each last message', async () => {
      const alice = await freshUser('alice');
      const bob = await freshUser('bob');
      const carol = await freshUser('carol');
      const pair = await createGroup(alice, [bob.userId], 'pair');
      const trio = await createGroup(alice, [bob.userId, carol.userId], 'trio');
      await send(alice, pair.id, 'one');
      await send(alice, trio.id, 'one');
      await send(bob, trio.id, 'two');
      // Bob's cursor in the pair reaches its message; in the trio, his own message's receipts are the others'.
      await bob.gql(MARK_READ, { conversationId: pair.id, seq: 1 });
      await bob.gql(MARK_READ, { conversationId: trio.id, seq: 2 });
      await carol.gql(MARK_READ, { conversationId: trio.id, seq: 2 });
      const response = await alice.gql(INBOX, { first: 10 });
      expect(response.stats.batches).toContainEqual({ loader: 'readCount', size: 2 });
      const receipts = Object.fromEntries(
        (response.data.viewer.conversations.edges as { node: InboxNode }[]).map((e) => [e.node.title, e.node.lastMessage?.readCount]),
      );
      expect(receipts).toEqual({ pair: 1, trio: 1 });
      await alice.gql(MARK_READ, { conversationId: trio.id, seq: 2 });
      expect((await nodeOf(carol, trio.id)).lastMessage.readCount).toBe(2);
    });
  });

  describe('Cost', () => {
    it('runs 5 statements for an inbox page of 5 or of 50: the page, last messages, unread counts, bodies, read counts', async () => {
      const viewer = await freshUser('viewer');
      const other = await freshUser('other');
      const ids = await seedGroups(viewer.userId, [other.userId], activityTimes(50, 1));
      await seedMessagesInto(ids, other.userId, 3);
      const measured: Record<number, { statements: number; batches: unknown[] }> = {};
      for (const first of [5, 50]) {
        const response = await viewer.gql(INBOX, { first });
        expect(response.errors).toBeUndefined();
        const edges = response.data.viewer.conversations.edges as { node: InboxNode }[];
        expect(edges).toHaveLength(first);
        expect(edges[0]!.node).toMatchObject({
          title: 'seeded',
          ...unread(3),
          lastMessage: { seq: 3, content: text('message 3'), readCount: 0, sender: { id: other.userId } },
        });
        const batches = [...response.stats.batches].sort((a, b) => a.loader.localeCompare(b.loader));
        measured[first] = { statements: response.stats.statements, batches };
      }
      const batchesOf = (size: number) => [
        { loader: 'body', size },
        { loader: 'lastMessage', size },
        { loader: 'readCount', size },
        { loader: 'unread', size },
      ];
      expect(measured).toEqual({
        5: { statements: 5, batches: batchesOf(5) },
        50: { statements: 5, batches: batchesOf(50) },
      });
    });
  });
});
