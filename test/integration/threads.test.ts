import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, MARK_READ, REVOKE, send } from '../helpers/operations.ts';

const REPLY = `mutation Reply($conversationId: ID!, $clientMsgId: String!, $text: String!, $replyTo: ID) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text, replyToMessageId: $replyTo }) {
    message { id seq replyTo { id } threadRoot { id } }
  }
}`;
const MESSAGE = `query Message($id: ID!) {
  message(id: $id) {
    id replyCount threadUnreadCount replyToUnavailable
    replyTo { id content { __typename ... on TextContent { text } } }
    threadRoot { id }
  }
}`;
const REPLIES = `query Replies($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  message(id: $id) {
    replies(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { seq readCount content { __typename ... on TextContent { text } } } }
      pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
    }
  }
}`;
const MARK_THREAD = `mutation MarkThread($messageId: ID!, $seq: Seq!) { markThreadRead(input: { messageId: $messageId, seq: $seq }) { message { id threadUnreadCount } } }`;
const PAGE = `query Page($id: ID!) {
  conversation(id: $id) { messages(last: 100) { edges { node { seq replyCount replyToUnavailable replyTo { seq } } } } }
}`;

describe.each(backends)('Replies and threads (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let n = 0;
  const reply = (client: Client, conversationId: string, replyTo: string | null, text = `reply ${++n}`) =>
    client.gql(REPLY, { conversationId, clientMsgId: `${client.userId}-${++n}`, text, replyTo });
  const replied = async (client: Client, conversationId: string, replyTo: string, text?: string) => {
    const response = await reply(client, conversationId, replyTo, text);
    expect(response.errors).toBeUndefined();
    return response.data.sendMessage.message as { id: string; seq: number; replyTo: { id: string } | null; threadRoot: { id: string } | null };
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
  });
  afterAll(() => harness.close());

  it('keeps a reply in the timeline with its own seq, pointing at its original; a reply to a reply stays in the root\'s thread', async () => {
    const group = await createGroup(alice, ['bob']);
    const root = await send(alice, group.id, 'root');
    const first = await replied(bob, group.id, root.id, 'first answer');
    const nested = await replied(alice, group.id, first.id, 'answer to the answer');
    expect(first).toMatchObject({ seq: root.seq + 1, replyTo: { id: root.id }, threadRoot: { id: root.id } });
    expect(nested).toMatchObject({ seq: root.seq + 2, replyTo: { id: first.id }, threadRoot: { id: root.id } });
    const page = await bob.gql(PAGE, { id: group.id });
    expect(page.data.conversation.messages.edges.map((e: any) => [e.node.seq, e.node.replyCount, e.node.replyTo?.seq ?? null])).toEqual([
      [root.seq, 2, null],
      [first.seq, 0, root.seq],
      [nested.seq, 0, first.seq],
    ]);
    const onReply = await bob.gql(REPLIES, { id: first.id });
    expect(onReply.data.message.replies.edges).toEqual([]);
  });

  it('refuses a reply to a message the sender cannot see or that was revoked, naming the argument', async () => {
    const group = await createGroup(alice, ['bob']);
    const other = await createGroup(alice, []);
    const elsewhere = await send(alice, other.id, 'not in this conversation');
    const hidden = await send(alice, group.id, 'bob hides this');
    await bob.gql(DELETE_FOR_ME, { messageIds: [hidden.id] });
    const revoked = await send(alice, group.id, 'revoked');
    await alice.gql(REVOKE, { messageId: revoked.id });
    for (const target of [elsewhere.id, hidden.id, revoked.id, 'not-an-id', messageGlobalId(group.uuid, 999)]) {
      const response = await reply(bob, group.id, target);
      expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      expect(response.errors![0]!.extensions!.argumentName).toBe('replyToMessageId');
    }
    const page = await bob.gql(PAGE, { id: group.id });
    expect(page.data.conversation.messages.edges.map((e: any) => e.node.seq)).toEqual([revoked.seq]);
  });

  it('answers a retried reply with its first copy even once the original was revoked', async () => {
    const group = await createGroup(alice, ['bob']);
    const original = await send(alice, group.id, 'soon revoked original');
    const first = await bob.gql(REPLY, { conversationId: group.id, clientMsgId: 'retried-reply', text: 'my answer', replyTo: original.id });
    expect(first.errors).toBeUndefined();
    await alice.gql(REVOKE, { messageId: original.id });
    const retry = await bob.gql(REPLY, { conversationId: group.id, clientMsgId: 'retried-reply', text: 'my answer', replyTo: original.id });
    expect(retry.errors).toBeUndefined();
    expect(retry.data.sendMessage.message).toEqual(first.data.sendMessage.message);
    // A new reply to it is still refused.
    expect(codes(await reply(bob, group.id, original.id))).toEqual(['BAD_USER_INPUT']);
  });

  it('shows a revoked original as RevokedContent, and one the reader cannot see as unavailable', async () => {
    const group = await createGroup(alice, ['bob']);
    const revokedLater = await send(alice, group.id, 'will be revoked');
    const hiddenLater = await send(alice, group.id, 'bob will hide this');
    const toRevoked = await replied(alice, group.id, revokedLater.id);
    const toHidden = await replied(alice, group.id, hiddenLater.id);
    await alice.gql(REVOKE, { messageId: revokedLater.id });
    await bob.gql(DELETE_FOR_ME, { messageIds: [hiddenLater.id] });
    const seenRevoked = await bob.gql(MESSAGE, { id: toRevoked.id });
    expect(seenRevoked.data.message).toMatchObject({ replyToUnavailable: false, replyTo: { id: revokedLater.id, content: { __typename: 'RevokedContent' } } });
    const seenHidden = await bob.gql(MESSAGE, { id: toHidden.id });
    expect(seenHidden.data.message).toMatchObject({ replyToUnavailable: true, replyTo: null, threadRoot: null });
    const byAlice = await alice.gql(MESSAGE, { id: toHidden.id });
    expect(byAlice.data.message).toMatchObject({ replyToUnavailable: false, replyTo: { id: hiddenLater.id } });
    const plain = await bob.gql(MESSAGE, { id: revokedLater.id });
    expect(plain.data.message).toMatchObject({ replyToUnavailable: false, replyTo: null, replyCount: 1 });
  });

  it('pages a thread both ways with exact flags, with the reader\'s views applied', async () => {
    const group = await createGroup(alice, ['bob']);
    const root = await send(alice, group.id, 'thread root');
    const replies = [];
    for (let i = 0; i < 7; i++) {
      replies.push(await replied(i % 2 === 0 ? alice : bob, group.id, root.id, `r${i}`));
      await send(alice, group.id, `timeline ${i}`);
    }
    await bob.gql(DELETE_FOR_ME, { messageIds: [replies[3]!.id] });
    const visible = replies.filter((_, i) => i !== 3).map((r) => r.seq);
    const seqsOf = (response: any) => response.data.message.replies.edges.map((e: any) => e.node.seq);

    const newest = await bob.gql(REPLIES, { id: root.id, last: 2 });
    expect(seqsOf(newest)).toEqual(visible.slice(-2));
    expect(newest.data.message.replies.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });

    const walkedBack: number[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await bob.gql(REPLIES, { id: root.id, last: 2, before });
      walkedBack.unshift(...seqsOf(page));
      if (!page.data.message.replies.pageInfo.hasPreviousPage) break;
      before = page.data.message.replies.pageInfo.startCursor;
    }
    expect(walkedBack).toEqual(visible);

    const oldest = await bob.gql(REPLIES, { id: root.id, first: 4 });
    expect(seqsOf(oldest)).toEqual(visible.slice(0, 4));
    expect(oldest.data.message.replies.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    const rest = await bob.gql(REPLIES, { id: root.id, first: 4, after: oldest.data.message.replies.pageInfo.endCursor });
    expect(seqsOf(rest)).toEqual(visible.slice(4));
    expect(rest.data.message.replies.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    // Past the end: an empty page that keeps the cursor it was asked from.
    const beyond = await bob.gql(REPLIES, { id: root.id, first: 4, after: rest.data.message.replies.pageInfo.endCursor });
    expect(beyond.data.message.replies).toEqual({
      edges: [],
      pageInfo: { hasPreviousPage: true, hasNextPage: false, startCursor: rest.data.message.replies.pageInfo.endCursor, endCursor: rest.data.message.replies.pageInfo.endCursor },
    });
    expect((await bob.gql(MESSAGE, { id: root.id })).data.message.replyCount).toBe(6);
    expect((await alice.gql(MESSAGE, { id: root.id })).data.message.replyCount).toBe(7);

    // Cleared history takes the root and its thread with it.
    await bob.gql(CLEAR, { conversationId: group.id });
    expect(codes(await bob.gql(REPLIES, { id: root.id }))).toEqual(['NOT_FOUND']);
  });

  it('counts unread replies from others above both read positions, and markThreadRead moves only the thread\'s', async () => {
    const group = await createGroup(alice, ['bob', 'carol']);
    const root = await send(alice, group.id, 'unread root');
    const own = await replied(bob, group.id, root.id, 'bob himself');
    const r1 = await replied(alice, group.id, root.id, 'from alice');
    const r2 = await replied(carol, group.id, root.id, 'from carol');
    const unread = async () => (await bob.gql(MESSAGE, { id: root.id })).data.message.threadUnreadCount;
    expect(await unread()).toBe(2);
    const marked = await bob.gql(MARK_THREAD, { messageId: root.id, seq: r1.seq });
    expect(marked.errors).toBeUndefined();
    expect(marked.data.markThreadRead.message).toEqual({ id: root.id, threadUnreadCount: 1 });
    // Never backwards.
    await bob.gql(MARK_THREAD, { messageId: root.id, seq: own.seq });
    expect(await unread()).toBe(1);
    // The conversation's read position counts too, and markThreadRead left it alone.
    expect((await bob.gql(MARK_READ, { conversationId: group.id, seq: r2.seq })).errors).toBeUndefined();
    expect(await unread()).toBe(0);
    // Carol's own reply never counts for her: bob's and alice's do.
    expect((await carol.gql(MESSAGE, { id: root.id })).data.message.threadUnreadCount).toBe(2);
    // On a reply, and past maxSeq: refused.
    expect(codes(await bob.gql(MARK_THREAD, { messageId: r1.id, seq: r1.seq }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await bob.gql(MARK_THREAD, { messageId: root.id, seq: 10_000 }))).toEqual(['BAD_USER_INPUT']);
  });

  it('tells the reader\'s other devices through the change feed, and only them, when they read a thread', async () => {
    const group = await createGroup(alice, ['bob']);
    const root = await send(alice, group.id, 'synced root');
    const answer = await replied(alice, group.id, root.id, 'synced answer');
    const CURSOR = 'query ($id: ID!) { conversation(id: $id) { messages(last: 1) { changesCursor } } }';
    const CHANGES = 'query ($id: ID!, $after: String) { conversation(id: $id) { changes(after: $after) { changes { kind fromSeq message { id threadUnreadCount } } } } }';
    const start = (await bob.gql(CURSOR, { id: group.id })).data.conversation.messages.changesCursor;
    expect((await bob.gql(MARK_THREAD, { messageId: root.id, seq: answer.seq })).errors).toBeUndefined();
    // Marking again where it already is records nothing more.
    await bob.gql(MARK_THREAD, { messageId: root.id, seq: answer.seq });
    const bobs = await bob.gql(CHANGES, { id: group.id, after: start });
    expect(bobs.data.conversation.changes.changes).toEqual([{ kind: 'THREAD_READ', fromSeq: root.seq, message: { id: root.id, threadUnreadCount: 0 } }]);
    const alices = await alice.gql(CHANGES, { id: group.id, after: start });
    expect(alices.data.conversation.changes.changes).toEqual([]);
  });

  it('caps the thread unread count at 99', async () => {
    const group = await createGroup(alice, ['bob']);
    const root = await send(alice, group.id, 'busy root');
    for (let i = 0; i < 101; i++) await replied(alice, group.id, root.id, `busy ${i}`);
    expect((await bob.gql(MESSAGE, { id: root.id })).data.message.threadUnreadCount).toBe(99);
  });
});
