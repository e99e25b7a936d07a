/**
 * Group membership over time through the API: adding, removing, leaving,
 * roles, the member list, and what newcomers see of older history.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { decodeConversationId } from '../../src/history/globalId.ts';
import { listMembers } from '../../src/store/members.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type GraphQLResponse, type Harness, startHarness } from '../helpers/harness.ts';
import { type LargeGroup, seedLargeGroup } from '../helpers/largeGroup.ts';
import { SEND, send } from '../helpers/operations.ts';
import { recordingRunner, statementCost } from '../helpers/statementCost.ts';

const CREATE = `mutation ($members: [ID!]!, $visibility: HistoryVisibility) {
  createConversation(input: { memberIds: $members, historyVisibility: $visibility }) { conversation { id historyVisibility myRole } }
}`;
const ADD = `mutation ($id: ID!, $users: [ID!]!) { addMembers(input: { conversationId: $id, userIds: $users }) { addedCount conversation { id } } }`;
const REMOVE = `mutation ($id: ID!, $user: ID!) { removeMember(input: { conversationId: $id, userId: $user }) { conversation { id } } }`;
const LEAVE = `mutation ($id: ID!) { leaveConversation(input: { conversationId: $id }) { conversationId } }`;
const VISIBILITY = `mutation ($id: ID!, $v: HistoryVisibility!) { setHistoryVisibility(input: { conversationId: $id, historyVisibility: $v }) { conversation { historyVisibility } } }`;
const PAGE = `query ($id: ID!) { conversation(id: $id) { messages(last: 50) { edges { node { seq } } startSeq endSeq gaps { from to } pageInfo { hasPreviousPage } } } }`;
const MEMBERS = `query ($id: ID!, $first: Int, $after: String) {
  conversation(id: $id) { myRole members(first: $first, after: $after) { edges { cursor node { user { id } role readSeq joinedAt } } pageInfo { hasNextPage endCursor } } }
}`;
const MEMBER_IDS = `query ($id: ID!, $first: Int, $after: String) {
  conversation(id: $id) { members(first: $first, after: $after) { edges { node { user { id } } } pageInfo { hasNextPage endCursor } } }
}`;
const MESSAGE = `query ($id: ID!) { message(id: $id) { seq } }`;
const DIRECT = `mutation ($user: ID!) { openDirectConversation(userId: $user) { conversation { id } } }`;

describe.each(backends)('Group membership (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let dave: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    dave = await harness.client('dave');
  });
  afterAll(() => harness.close());

  const create = async (members: string[], visibility?: 'SHARED' | 'SINCE_JOINED') => {
    const response = await alice.gql(CREATE, { members, visibility });
    expect(response.errors).toBeUndefined();
    const conversation = response.data.createConversation.conversation as { id: string; historyVisibility: string; myRole: string };
    return conversation;
  };
  const seqs = async (client: Client, id: string) => {
    const response = await client.gql(PAGE, { id });
    expect(response.errors).toBeUndefined();
    return response.data.conversation.messages;
  };
  const sendSome = async (id: string, count: number) => {
    const sent = [];
    for (let i = 0; i < count; i++) sent.push(await send(alice, id, `message ${i}`));
    return sent;
  };

  it('creates groups SHARED by default, with the creator as owner', async () => {
    expect(await create(['bob'])).toMatchObject({ historyVisibility: 'SHARED', myRole: 'OWNER' });
    expect(await create(['bob'], 'SINCE_JOINED')).toMatchObject({ historyVisibility: 'SINCE_JOINED' });
  });

  it('lets a newcomer of a SHARED group read all history', async () => {
    const group = await create(['bob']);
    await sendSome(group.id, 3);
    expect((await alice.gql(ADD, { id: group.id, users: ['carol'] })).data.addMembers.addedCount).toBe(1);
    expect((await seqs(carol, group.id)).edges.map((e: { node: { seq: number } }) => e.node.seq)).toEqual([1, 2, 3]);
  });

  it('shows a newcomer of a SINCE_JOINED group only what came after they joined, on every path, until the owner shares it', async () => {
    const group = await create(['bob'], 'SINCE_JOINED');
    const before = await sendSome(group.id, 3);
    await alice.gql(ADD, { id: group.id, users: ['carol'] });
    await sendSome(group.id, 2);
    const page = await seqs(carol, group.id);
    expect(page.edges.map((e: { node: { seq: number } }) => e.node.seq)).toEqual([4, 5]);
    expect(page).toMatchObject({ startSeq: 1, endSeq: 5, gaps: [{ from: 1, to: 3 }], pageInfo: { hasPreviousPage: false } });
    expect(codes(await carol.gql(MESSAGE, { id: before[0]!.id }))).toEqual(['NOT_FOUND']);
    // Members from the start see everything.
    expect((await seqs(bob, group.id)).edges).toHaveLength(5);
    await alice.gql(VISIBILITY, { id: group.id, v: 'SHARED' });
    expect((await seqs(carol, group.id)).edges).toHaveLength(5);
  });

  it('lets only the owner add, remove and change visibility', async () => {
    const group = await create(['bob']);
    expect(codes(await bob.gql(ADD, { id: group.id, users: ['dave'] }))).toEqual(['FORBIDDEN']);
    expect(codes(await bob.gql(REMOVE, { id: group.id, user: 'alice' }))).toEqual(['FORBIDDEN']);
    expect(codes(await bob.gql(VISIBILITY, { id: group.id, v: 'SINCE_JOINED' }))).toEqual(['FORBIDDEN']);
    expect(codes(await dave.gql(ADD, { id: group.id, users: ['dave'] }))).toEqual(['NOT_FOUND']);
    expect(codes(await alice.gql(REMOVE, { id: group.id, user: 'alice' }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await alice.gql(REMOVE, { id: group.id, user: 'nobody' }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await alice.gql(ADD, { id: group.id, users: [] }))).toEqual(['BAD_USER_INPUT']);
  });

  it('cuts a removed member off every path at once', async () => {
    const group = await create(['bob', 'carol']);
    const [first] = await sendSome(group.id, 2);
    expect((await alice.gql(REMOVE, { id: group.id, user: 'carol' })).errors).toBeUndefined();
    expect(codes(await carol.gql(PAGE, { id: group.id }))).toEqual(['NOT_FOUND']);
    expect(codes(await carol.gql(MESSAGE, { id: first!.id }))).toEqual(['NOT_FOUND']);
    expect(codes(await carol.gql(SEND, { conversationId: group.id, clientMsgId: 'x', text: 'still here?' }))).toEqual(['NOT_FOUND']);
    expect((await seqs(bob, group.id)).edges).toHaveLength(2);
  });

  it('hands ownership to the longest-standing member when the owner leaves', async () => {
    const group = await create(['bob']);
    await alice.gql(ADD, { id: group.id, users: ['carol'] });
    expect((await alice.gql(LEAVE, { id: group.id })).data).toEqual({ leaveConversation: { conversationId: group.id } });
    expect(codes(await alice.gql(PAGE, { id: group.id }))).toEqual(['NOT_FOUND']);
    expect((await bob.gql(MEMBERS, { id: group.id })).data.conversation.myRole).toBe('OWNER');
    expect((await carol.gql(MEMBERS, { id: group.id })).data.conversation.myRole).toBe('MEMBER');
    expect(codes(await alice.gql(LEAVE, { id: group.id }))).toEqual(['NOT_FOUND']);
  });

  it('refuses to leave or change a direct conversation', async () => {
    const direct = (await alice.gql(DIRECT, { user: 'bob' })).data.openDirectConversation.conversation.id;
    expect(codes(await alice.gql(LEAVE, { id: direct }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await alice.gql(ADD, { id: direct, users: ['carol'] }))).toEqual(['BAD_USER_INPUT']);
    expect((await alice.gql(MEMBERS, { id: direct })).data.conversation.myRole).toBe('MEMBER');
  });

  it('pages through members in join order with their roles and read cursors, user ids with colons included', async () => {
    const group = await create([]);
    // Cursors spell the user id as it is, ':' included (listCursors.ts).
    const users = Array.from({ length: 7 }, (_, i) => (i % 2 === 0 ? `sso|member:${i}:` : `member-${i}`));
    for (const user of users) await alice.gql(ADD, { id: group.id, users: [user] });
    const seen: { user: string; role: string }[] = [];
    let after: string | null = null;
    for (;;) {
      const response: GraphQLResponse = await alice.gql(MEMBERS, { id: group.id, first: 3, after });
      expect(response.errors).toBeUndefined();
      const connection = response.data.conversation.members;
      seen.push(...connection.edges.map((e: { node: { user: { id: string }; role: string } }) => ({ user: e.node.user.id, role: e.node.role })));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual([{ user: 'alice', role: 'OWNER' }, ...users.map((user) => ({ user, role: 'MEMBER' }))]);
    expect(codes(await dave.gql(MEMBERS, { id: group.id }))).toEqual(['NOT_FOUND']);
    expect(codes(await alice.gql(MEMBERS, { id: group.id, after: 'bogus' }))).toEqual(['BAD_USER_INPUT']);
  });

  it('adds many users in one transaction, skipping those already in', async () => {
    const group = await create(['bob']);
    const added = await alice.gql(ADD, { id: group.id, users: ['bob', 'carol', 'dave', 'carol'] });
    expect(added.data.addMembers.addedCount).toBe(2);
    const [row] = rowsOf<{ n: number }>(
      await harness.database.db.execute(sql`select count(*)::int as n from members where conv_id = ${decodeConversationId(group.id)}`),
    );
    expect(row!.n).toBe(4);
  });

  describe('in a group of 10,000', () => {
    const SIZE = 10_000;
    let group: LargeGroup;
    beforeAll(async () => {
      group = await seedLargeGroup(harness.database, SIZE, 10);
    });

    it('pages through every member in join order, ties within a millisecond by user id, one statement a page', async () => {
      const owner = await harness.client(group.userId(0));
      const seen: string[] = [];
      const statements = new Set<number>();
      let after: string | null = null;
      for (;;) {
        const response: GraphQLResponse = await owner.gql(MEMBER_IDS, { id: group.id, first: 100, after });
        expect(response.errors).toBeUndefined();
        statements.add(response.stats.statements);
        const connection = response.data.conversation.members;
        seen.push(...connection.edges.map((e: { node: { user: { id: string } } }) => e.node.user.id));
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor;
      }
      expect(seen).toEqual(Array.from({ length: SIZE }, (_, k) => group.userId(k)));
      expect([...statements]).toEqual([1]);
    });

    it('reads the page and the row past it, not the group, for the first page of 100 and for a later one', async () => {
      const viewer = group.userId(7);
      const first = await listMembers(recordingRunner(harness.database).runner, viewer, group.uuid, null, 100);
      if (first.kind !== 'members') throw new Error(`expected members, got ${first.kind}`);
      const middle = first.rows[99]!;
      for (const after of [null, { joinedMillis: middle.joinedMillis, userId: middle.userId }]) {
        const { runner, sent } = recordingRunner(harness.database);
        const page = await listMembers(runner, viewer, group.uuid, after, 100);
        expect(page.kind === 'members' && page.rows.length).toBe(101);
        const cost = await statementCost(harness.database, sent[0]!);
        // The viewer's own row, the page's 100 and the one that says another page follows.
        expect(cost.rowsVisited, JSON.stringify(cost.plan)).toEqual({ members: 1 + 101 });
        // Index pages, and a heap page per row at the most.
        expect(cost.buffers, JSON.stringify(cost.plan)).toBeLessThanOrEqual(101 + 10);
      }
    });
  });
});
