import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/history/cursor.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup, DELETE_FOR_ME, type Edge, MESSAGES } from '../helpers/operations.ts';

describe.each(backends)('Pages through messages (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let conv: { id: string; uuid: string };
  let other: { id: string; uuid: string };

  const seqsOf = (edges: Edge[]) => edges.map((e) => e.node.seq);
  const page = (variables: Record<string, unknown>, client = alice) => client.gql(MESSAGES, { id: conv.id, ...variables });

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    conv = await createGroup(alice, ['bob']);
    other = await createGroup(alice, ['bob'], 'other');
    await seedMessages(harness, conv.uuid, 'alice', 250);
  });
  afterAll(() => harness.close());

  it('answers the newest 20 when no argument is given', async () => {
    const response = await page({});
    expect(response.errors).toBeUndefined();
    const connection = response.data.conversation.messages;
    expect(seqsOf(connection.edges)).toEqual(Array.from({ length: 20 }, (_, i) => 231 + i));
    expect(connection.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    expect(connection).toMatchObject({ startSeq: 231, endSeq: 250, latestSeq: 250, anchorFound: null });
  });

  it('answers the oldest N for first: N and the newest N for last: N, ascending', async () => {
    const oldest = (await page({ first: 3 })).data.conversation.messages;
    expect(seqsOf(oldest.edges)).toEqual([1, 2, 3]);
    expect(oldest.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    const newest = (await page({ last: 3 })).data.conversation.messages;
    expect(seqsOf(newest.edges)).toEqual([248, 249, 250]);
    expect(newest.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
  });

  it('pages strictly older with before and strictly newer with after, 20 by default', async () => {
    const before = (await page({ before: encodeCursor(conv.uuid, 100) })).data.conversation.messages;
    expect(seqsOf(before.edges)).toEqual(Array.from({ length: 20 }, (_, i) => 80 + i));
    expect(before.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const after = (await page({ after: encodeCursor(conv.uuid, 100), first: 5 })).data.conversation.messages;
    expect(seqsOf(after.edges)).toEqual([101, 102, 103, 104, 105]);
    expect(after.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
  });

  it('reports exact flags at both ends, so a walk never needs an empty request', async () => {
    const first = (await page({ first: 100 })).data.conversation.messages;
    expect(first.pageInfo.hasPreviousPage).toBe(false);
    const lastFull = (await page({ after: encodeCursor(conv.uuid, 150), first: 100 })).data.conversation.messages;
    expect(seqsOf(lastFull.edges).at(-1)).toBe(250);
    expect(lastFull.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    const oldestExact = (await page({ before: encodeCursor(conv.uuid, 4), last: 3 })).data.conversation.messages;
    expect(seqsOf(oldestExact.edges)).toEqual([1, 2, 3]);
    expect(oldestExact.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
  });

  it('gives an empty page the cursor it was asked from as both of its cursors, so a client never stores null', async () => {
    const newest = encodeCursor(conv.uuid, 250);
    const after = (await page({ first: 10, after: newest })).data.conversation.messages;
    expect(after).toMatchObject({ edges: [], pageInfo: { hasPreviousPage: true, hasNextPage: false, startCursor: newest, endCursor: newest } });
    const oldest = encodeCursor(conv.uuid, 1);
    const before = (await page({ last: 10, before: oldest })).data.conversation.messages;
    expect(before).toMatchObject({ edges: [], pageInfo: { hasPreviousPage: false, hasNextPage: true, startCursor: oldest, endCursor: oldest } });
  });

  it('keeps a page full when messages inside it are hidden from the viewer', async () => {
    const newest = (await page({ last: 5 }, bob)).data.conversation.messages;
    const hide = await bob.gql(DELETE_FOR_ME, { messageIds: newest.edges.slice(1, 3).map((e: Edge) => e.node.id) });
    expect(hide.data.deleteMessagesForMe.deletedCount).toBe(2);
    const after = (await page({ last: 5 }, bob)).data.conversation.messages;
    expect(seqsOf(after.edges)).toEqual([244, 245, 246, 249, 250]);
    // Alice still sees everything.
    expect(seqsOf((await page({ last: 5 })).data.conversation.messages.edges)).toEqual([246, 247, 248, 249, 250]);
  });

  it('runs 1 SQL statement and no body batch whatever the page size: the page (with membership and warm bodies)', async () => {
    const counts: number[] = [];
    for (const size of [1, 20, 100]) {
      const response = await page({ last: size });
      expect(response.data.conversation.messages.edges).toHaveLength(size);
      counts.push(response.stats.statements);
      expect(response.stats.batches).toEqual([]);
      expect(response.data.conversation.messages.edges.every((e: Edge) => e.node.content.__typename === 'TextContent')).toBe(true);
    }
    expect(counts).toEqual([1, 1, 1]);
  });

  it("runs 2 statements when the conversation's own fields are asked for too", async () => {
    const response = await alice.gql(
      `query ($id: ID!) { conversation(id: $id) { title maxSeq messages(last: 50) { edges { node { seq content { __typename } } } } } }`,
      { id: conv.id },
    );
    expect(response.data.conversation).toMatchObject({ title: 'test group', maxSeq: 250 });
    expect(response.stats.statements).toBe(2);
    expect(response.stats.batches).toEqual([{ loader: 'conversation', size: 1 }]);
  });

  it('checks membership in the page statement when only pages are asked for', async () => {
    const carol = await harness.client('carol');
    const response = await carol.gql(`query ($id: ID!) { conversation(id: $id) { id messages(last: 5) { edges { cursor } } } }`, {
      id: conv.id,
    });
    expect(codes(response)).toEqual(['NOT_FOUND']);
    expect(response.data).toEqual({ conversation: null });
    expect(response.stats.statements).toBe(1);
  });

  it('does not skip the membership check when a directive could drop the page from the selection', async () => {
    const carol = await harness.client('carol');
    const response = await carol.gql(
      `query ($id: ID!, $withPage: Boolean!) { conversation(id: $id) { id messages(last: 5) @include(if: $withPage) { edges { cursor } } } }`,
      { id: conv.id, withPage: false },
    );
    expect(codes(response)).toEqual(['NOT_FOUND']);
    expect(response.data).toEqual({ conversation: null });
  });

  it.each([
    [{ first: 0 }, 'first'],
    [{ first: 101 }, 'first'],
    [{ last: -1 }, 'last'],
    [{ first: 5, last: 5 }, 'last'],
    [{ after: 'x', before: 'y' }, 'before'],
    [{ first: 5, before: 'cursor' }, 'before'],
    [{ last: 5, after: 'cursor' }, 'after'],
    [{ after: 'not-a-cursor' }, 'after'],
    [{ before: 'bm90LWEtY3Vyc29y' }, 'before'],
  ])('refuses %j with BAD_USER_INPUT naming %s', async (variables, argumentName) => {
    // Cursors in the combination cases must be real ones, so only the combination is wrong.
    const real = encodeCursor(conv.uuid, 10);
    const fixed = Object.fromEntries(
      Object.entries(variables).map(([k, v]) => [k, v === 'cursor' || v === 'x' || v === 'y' ? real : v]),
    );
    const response = await page(fixed);
    expect(codes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors![0]!.extensions!.argumentName).toBe(argumentName);
    expect(response.data.conversation).toBeNull();
  });

  it('refuses a tampered cursor and a cursor from another conversation', async () => {
    const real = encodeCursor(conv.uuid, 10);
    const tampered = Buffer.from(Buffer.from(real, 'base64url').toString().replace(':10:', ':11:')).toString('base64url');
    const foreign = encodeCursor(other.uuid, 10);
    for (const before of [tampered, foreign]) {
      const response = await page({ before });
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('before');
    }
  });

  it('answers NOT_FOUND for a conversation the viewer is not in, exactly as for none at all', async () => {
    const carol = await harness.client('carol');
    const notMember = await carol.gql(MESSAGES, { id: conv.id, last: 5 });
    const missing = await carol.gql(MESSAGES, { id: 'no-such-conversation', last: 5 });
    expect(codes(notMember)).toEqual(['NOT_FOUND']);
    expect(codes(missing)).toEqual(['NOT_FOUND']);
    expect(notMember.data).toEqual(missing.data);
    expect(notMember.text).not.toContain('message 1');
  });
});
