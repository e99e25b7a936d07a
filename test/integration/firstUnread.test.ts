import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, DELETE_FOR_ME, MARK_READ, send } from '../helpers/operations.ts';

const FIRST_UNREAD = `query ($id: ID!) { conversation(id: $id) { readSeq unreadCount firstUnreadMessage { id seq } } }`;
const OPEN = `query ($id: ID!, $first: Int, $last: Int, $after: String, $before: String) {
  conversation(id: $id) {
    messages(aroundFirstUnread: true, first: $first, last: $last, after: $after, before: $before) {
      edges { node { seq } } firstUnreadSeq anchorFound pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
    }
  }
}`;
const MARK_UNREAD = `mutation ($id: ID!) { markUnread(input: { messageId: $id }) { conversation { readSeq unreadCount firstUnreadMessage { seq } } } }`;
const RECEIPTS = `query ($id: ID!) { conversation(id: $id) { messages(last: 100) { edges { node { seq readCount } } } } }`;

describe.each(backends)('Opening at the first unread message (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let eve: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    eve = await harness.client('eve');
  });
  afterAll(() => harness.close());

  /** A group with 30 messages from alice; bob has read through 12 and hidden 13. */
  const scene = async () => {
    const group = await createGroup(alice, ['bob']);
    const sent = [];
    for (let i = 1; i <= 30; i++) sent.push(await send(alice, group.id, `m${i}`));
    await bob.gql(MARK_READ, { conversationId: group.id, seq: 12 });
    await bob.gql(DELETE_FOR_ME, { messageIds: [sent[12]!.id] });
    return { group, sent };
  };

  it('names the oldest unread message from others that the reader can see', async () => {
    const { group } = await scene();
    const seen = await bob.gql(FIRST_UNREAD, { id: group.id });
    expect(seen.data.conversation).toMatchObject({ readSeq: 12, unreadCount: 17, firstUnreadMessage: { seq: 14 } });
    // The reader's own messages are never unread to them.
    await send(bob, group.id, 'mine');
    await bob.gql(MARK_READ, { conversationId: group.id, seq: 30 });
    expect((await bob.gql(FIRST_UNREAD, { id: group.id })).data.conversation.firstUnreadMessage).toBeNull();
  });

  it('opens the page there in one request, with the line\'s seq, and pages on from it with cursors', async () => {
    const { group } = await scene();
    const page = await bob.gql(OPEN, { id: group.id, last: 3, first: 4 });
    expect(page.errors).toBeUndefined();
    const connection = page.data.conversation.messages;
    // Three older, the anchor, four newer (bob hid 13).
    expect(connection.edges.map((e: any) => e.node.seq)).toEqual([10, 11, 12, 14, 15, 16, 17, 18]);
    expect(connection).toMatchObject({ firstUnreadSeq: 14, anchorFound: true, pageInfo: { hasPreviousPage: true, hasNextPage: true } });
    // The same variables plus a cursor page on, as Apollo Client's fetchMore sends them.
    const newer = await bob.gql(OPEN, { id: group.id, first: 5, after: connection.pageInfo.endCursor });
    expect(newer.data.conversation.messages.edges.map((e: any) => e.node.seq)).toEqual([19, 20, 21, 22, 23]);
    const older = await bob.gql(OPEN, { id: group.id, last: 5, before: connection.pageInfo.startCursor });
    expect(older.data.conversation.messages.edges.map((e: any) => e.node.seq)).toEqual([5, 6, 7, 8, 9]);
    expect(older.data.conversation.messages.firstUnreadSeq).toBeNull();
  });

  it('opens the newest page with no line when nothing is unread', async () => {
    const { group } = await scene();
    await bob.gql(MARK_READ, { conversationId: group.id, seq: 30 });
    const page = await bob.gql(OPEN, { id: group.id });
    // As many as the jump would have shown (10 and 10): the newest 20 bob can see.
    expect(page.data.conversation.messages.edges.map((e: any) => e.node.seq)).toEqual([10, 11, 12, ...Array.from({ length: 17 }, (_, i) => 14 + i)]);
    expect(page.data.conversation.messages).toMatchObject({ firstUnreadSeq: null, anchorFound: null, pageInfo: { hasPreviousPage: true, hasNextPage: false } });
  });

  it('refuses around with aroundFirstUnread, and answers a non-member NOT_FOUND', async () => {
    const { group, sent } = await scene();
    const both = await bob.gql(`query ($id: ID!, $m: ID!) { conversation(id: $id) { messages(around: $m, aroundFirstUnread: true) { edges { node { seq } } } } }`, {
      id: group.id,
      m: sent[0]!.id,
    });
    expect(codes(both)).toEqual(['BAD_USER_INPUT']);
    expect(codes(await eve.gql(OPEN, { id: group.id }))).toEqual(['NOT_FOUND']);
  });

  it('marks unread from a message, back or forward, and read receipts follow', async () => {
    const { group, sent } = await scene();
    const marked = await bob.gql(MARK_UNREAD, { id: sent[4]!.id });
    expect(marked.errors).toBeUndefined();
    expect(marked.data.markUnread.conversation).toEqual({ readSeq: 4, unreadCount: 25, firstUnreadMessage: { seq: 5 } });
    const receipts = await alice.gql(RECEIPTS, { id: group.id });
    const readCount = (seq: number) => receipts.data.conversation.messages.edges.find((e: any) => e.node.seq === seq).node.readCount;
    expect([readCount(4), readCount(5), readCount(12)]).toEqual([1, 0, 0]);
    // Forward too: it sets the position, it does not only lower it.
    const forward = await bob.gql(MARK_UNREAD, { id: sent[19]!.id });
    expect(forward.data.markUnread.conversation.readSeq).toBe(19);
    // markRead still never moves back.
    await bob.gql(MARK_READ, { conversationId: group.id, seq: 2 });
    expect((await bob.gql(FIRST_UNREAD, { id: group.id })).data.conversation.readSeq).toBe(19);
  });

  it('refuses to mark unread from a message the caller cannot read, and changes nothing', async () => {
    const { group, sent } = await scene();
    expect(codes(await bob.gql(MARK_UNREAD, { id: sent[12]!.id }))).toEqual(['NOT_FOUND']);
    expect(codes(await eve.gql(MARK_UNREAD, { id: sent[0]!.id }))).toEqual(['NOT_FOUND']);
    expect((await bob.gql(FIRST_UNREAD, { id: group.id })).data.conversation.readSeq).toBe(12);
  });
});
