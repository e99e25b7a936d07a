import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { type LiveClient, liveClient, untilLive } from '../helpers/liveClient.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, MARK_READ, REVOKE, send } from '../helpers/operations.ts';

const SEND = `mutation ($c: ID!, $k: String!, $t: String!, $ids: [ID!], $all: Boolean) {
  sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $t, mentionUserIds: $ids, mentionEveryone: $all }) {
    deduplicated message { id seq mentions { id } mentionsEveryone }
  }
}`;
const MENTIONS = `query ($first: Int, $after: String) {
  viewer { mentions(first: $first, after: $after) {
    edges { cursor everyone node { id content { __typename } } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  } }
}`;
const COUNT = `query ($id: ID!) { conversation(id: $id) { unreadMentionCount unreadCount } }`;
const INBOX = `query ($first: Int) { viewer { conversations(first: $first) { edges { node { id unreadMentionCount } } } } }`;
const PAGE = `query ($id: ID!, $last: Int) { conversation(id: $id) { messages(last: $last) { edges { node { seq mentions { id } mentionsEveryone } } } } }`;
const MAX_SEQ = `query ($id: ID!) { conversation(id: $id) { maxSeq } }`;
const MARK_UNREAD = `mutation ($id: ID!) { markUnread(input: { messageId: $id }) { conversation { unreadMentionCount } } }`;
const OPEN_DIRECT = `mutation ($u: ID!) { openDirectConversation(userId: $u) { conversation { id } } }`;
const ADD = `mutation ($c: ID!, $u: [ID!]!) { addMembers(input: { conversationId: $c, userIds: $u }) { conversation { id } } }`;
const LEAVE = `mutation ($c: ID!) { leaveConversation(input: { conversationId: $c }) { conversationId } }`;

describe.each(backends)('Mentions (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let n = 0;
  /** A fresh user, so each test reads mentions and counts of its own. */
  const someone = () => harness.client(`mentioned-${++n}`);

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
  });
  const sockets: LiveClient[] = [];
  afterAll(async () => {
    await Promise.all(sockets.map((socket) => socket.dispose()));
    await harness.close();
  });

  let k = 0;
  const mention = async (client: Client, conversationId: string, text: string, ids: string[] | null, all: boolean | null = null) => {
    const response = await client.gql(SEND, { c: conversationId, k: `mention-${++k}`, t: text, ids, all });
    return response;
  };
  const sent = async (client: Client, conversationId: string, text: string, ids: string[] | null, all: boolean | null = null) => {
    const response = await mention(client, conversationId, text, ids, all);
    expect(response.errors).toBeUndefined();
    return response.data.sendMessage.message as { id: string; seq: number; mentions: { id: string }[]; mentionsEveryone: boolean };
  };
  const mentionIds = async (client: Client, first = 100) => {
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const response = await client.gql(MENTIONS, { first, after });
      expect(response.errors).toBeUndefined();
      const page = response.data.viewer.mentions;
      ids.push(...page.edges.map((e: any) => e.node.id));
      if (!page.pageInfo.hasNextPage) return ids;
      after = page.pageInfo.endCursor;
    }
  };
  const unreadMentions = async (client: Client, id: string) => (await client.gql(COUNT, { id })).data.conversation.unreadMentionCount as number;

  it('stores who a message names, in the order given and each once, and whether it mentions everyone', async () => {
    const [bob, carol] = [await someone(), await someone()];
    const group = await createGroup(alice, [bob.userId, carol.userId]);
    const m = await sent(alice, group.id, 'hi both', [carol.userId, bob.userId, carol.userId], true);
    expect(m.mentions).toEqual([{ id: carol.userId }, { id: bob.userId }]);
    expect(m.mentionsEveryone).toBe(true);
    const plain = await send(alice, group.id, 'nobody named');
    const page = await bob.gql(PAGE, { id: group.id, last: 2 });
    expect(page.data.conversation.messages.edges.map((e: any) => e.node)).toEqual([
      { seq: m.seq, mentions: [{ id: carol.userId }, { id: bob.userId }], mentionsEveryone: true },
      { seq: plain.seq, mentions: [], mentionsEveryone: false },
    ]);
  });

  it('refuses a mention of someone who is not a member, naming the id, and stores nothing', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const before = (await alice.gql(MAX_SEQ, { id: group.id })).data.conversation.maxSeq;
    const refused = await mention(alice, group.id, 'hi stranger', [bob.userId, 'not-a-member']);
    expect(codes(refused)).toEqual(['BAD_USER_INPUT']);
    expect(refused.errors![0]!.extensions!.argumentName).toBe('mentionUserIds');
    expect(refused.errors![0]!.message).toContain('not-a-member');
    expect((await alice.gql(MAX_SEQ, { id: group.id })).data.conversation.maxSeq).toBe(before);
    const tooMany = await mention(alice, group.id, 'hi crowd', Array.from({ length: 51 }, (_, i) => `u${i}`));
    expect(codes(tooMany)).toEqual(['BAD_USER_INPUT']);
    expect(codes(await mention(alice, group.id, 'bad id', ['']))).toEqual(['BAD_USER_INPUT']);
    // A stranger to the conversation learns nothing about its members.
    const eve = await harness.client('eve');
    expect(codes(await mention(eve, group.id, 'hi', [bob.userId]))).toEqual(['NOT_FOUND']);
    expect((await alice.gql(MAX_SEQ, { id: group.id })).data.conversation.maxSeq).toBe(before);
  });

  it('answers a retry with the first copy even after a mentioned member left', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const variables = { c: group.id, k: `retry-${++k}`, t: 'hi bob', ids: [bob.userId], all: null };
    const first = await alice.gql(SEND, variables);
    expect(first.data.sendMessage.deduplicated).toBe(false);
    expect((await bob.gql(LEAVE, { c: group.id })).errors).toBeUndefined();
    const retry = await alice.gql(SEND, variables);
    expect(retry.errors).toBeUndefined();
    expect(retry.data.sendMessage).toEqual({ deduplicated: true, message: first.data.sendMessage.message });
    // A new message naming them is refused.
    expect(codes(await alice.gql(SEND, { ...variables, k: `retry-${++k}` }))).toEqual(['BAD_USER_INPUT']);
  });

  it('lets only the owner and admins mention everyone, and never in a direct conversation', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const refused = await mention(bob, group.id, 'all of you', null, true);
    expect(codes(refused)).toEqual(['FORBIDDEN']);
    expect((await sent(alice, group.id, 'all of you', null, true)).mentionsEveryone).toBe(true);
    const admin = await harness.client(bob.userId, { roles: ['admin'] });
    expect((await sent(admin, group.id, 'admins may', null, true)).mentionsEveryone).toBe(true);
    const direct = (await alice.gql(OPEN_DIRECT, { u: bob.userId })).data.openDirectConversation.conversation.id;
    expect(codes(await mention(alice, direct, 'just us', null, true))).toEqual(['FORBIDDEN']);
    expect(codes(await mention(admin, direct, 'just us', null, true))).toEqual(['FORBIDDEN']);
    expect((await sent(alice, direct, 'just you', [bob.userId])).mentions).toEqual([{ id: bob.userId }]);
  });

  it('counts unread mentions of the viewer and of everyone once each, from others only, after the read position', async () => {
    const [bob, carol] = [await someone(), await someone()];
    const group = await createGroup(alice, [bob.userId, carol.userId]);
    await sent(alice, group.id, 'carol only', [carol.userId]);
    const first = await sent(alice, group.id, 'bob', [bob.userId]);
    await sent(alice, group.id, 'bob and all', [bob.userId], true);
    await sent(alice, group.id, 'all', null, true);
    await sent(bob, group.id, 'bob names himself and alice', [bob.userId, 'alice']);
    await send(alice, group.id, 'plain');
    expect(await unreadMentions(bob, group.id)).toBe(3);
    expect(await unreadMentions(carol, group.id)).toBe(3);
    expect(await unreadMentions(alice, group.id)).toBe(1);
    expect((await bob.gql(MARK_READ, { conversationId: group.id, seq: first.seq })).errors).toBeUndefined();
    expect(await unreadMentions(bob, group.id)).toBe(2);
    const marked = await bob.gql(MARK_UNREAD, { id: first.id });
    expect(marked.data.markUnread.conversation.unreadMentionCount).toBe(3);
  });

  it('leaves out of the count and the list what the viewer cannot see: hidden, revoked, cleared, or in a group they left', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const hidden = await sent(alice, group.id, 'to hide', [bob.userId]);
    const revoked = await sent(alice, group.id, 'to revoke', [bob.userId]);
    const kept = await sent(alice, group.id, 'to keep', null, true);
    expect(await unreadMentions(bob, group.id)).toBe(3);
    await bob.gql(DELETE_FOR_ME, { messageIds: [hidden.id] });
    expect((await alice.gql(REVOKE, { messageId: revoked.id })).errors).toBeUndefined();
    expect(await unreadMentions(bob, group.id)).toBe(1);
    expect(await mentionIds(bob)).toEqual([kept.id]);
    const stored = rowsOf<{ n: number }>(
      await harness.database.db.execute(sql`select count(*)::int as n from message_mentions where conv_id = ${group.uuid} and seq = ${revoked.seq}`),
    );
    expect(stored[0]!.n).toBe(0);
    await bob.gql(CLEAR, { conversationId: group.id });
    expect(await unreadMentions(bob, group.id)).toBe(0);
    expect(await mentionIds(bob)).toEqual([]);
    const later = await sent(alice, group.id, 'after the clear', [bob.userId]);
    expect(await mentionIds(bob)).toEqual([later.id]);
    expect((await bob.gql(LEAVE, { c: group.id })).errors).toBeUndefined();
    expect(await mentionIds(bob)).toEqual([]);
  });

  it('lists mentions newest first across conversations, each message once, paged without short pages', async () => {
    const [bob, carol] = [await someone(), await someone()];
    const one = await createGroup(alice, [bob.userId, carol.userId]);
    const two = await createGroup(alice, [bob.userId]);
    const a = await sent(alice, one.id, 'a', [bob.userId]);
    await sent(alice, one.id, 'carol only', [carol.userId]);
    const b = await sent(alice, two.id, 'b', null, true);
    const c = await sent(carol, one.id, 'c', [bob.userId]);
    await sent(bob, one.id, 'bob\'s own', null, null);
    const d = await sent(alice, two.id, 'd', [bob.userId], true);
    await send(alice, one.id, 'plain');
    const e = await sent(alice, one.id, 'e', null, true);
    expect(await mentionIds(bob, 2)).toEqual([e.id, d.id, c.id, b.id, a.id]);
    const page = (await bob.gql(MENTIONS, { first: 5 })).data.viewer.mentions;
    expect(page.edges.map((edge: any) => edge.everyone)).toEqual([true, true, false, true, false]);
    expect(page.pageInfo.hasNextPage).toBe(false);
    // Someone added later sees the group's earlier everyone-mention (shared history), not what named others.
    const dave = await someone();
    expect((await alice.gql(ADD, { c: one.id, u: [dave.userId] })).errors).toBeUndefined();
    expect(await mentionIds(dave)).toEqual([e.id]);
    expect(await unreadMentions(dave, one.id)).toBe(1);
  });

  it('delivers who a message mentions with its live event', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    const socket = liveClient(harness.server.url, { authorization: `Bearer ${bob.token}` });
    sockets.push(socket);
    const events = socket.subscribe(
      'subscription ($id: ID!) { conversationEvents(conversationId: $id) { kind seq message { mentions { id } mentionsEveryone } } }',
      { id: group.id },
    );
    await untilLive(events, async () => (await send(alice, group.id, 'poke')).seq);
    const m = await sent(alice, group.id, 'live mention', [bob.userId], true);
    let event = (await events.next()).data.conversationEvents;
    while (event.seq !== m.seq) event = (await events.next()).data.conversationEvents;
    expect(event).toEqual({ kind: 'MESSAGE_SENT', seq: m.seq, message: { mentions: [{ id: bob.userId }], mentionsEveryone: true } });
  });

  it('refuses a cursor that is not one of the mentions list', async () => {
    const response = await alice.gql(MENTIONS, { first: 2, after: 'not-a-cursor' });
    expect(codes(response)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors![0]!.extensions!.argumentName).toBe('after');
  });

  it('reads a page of mentions, a page of messages with their mentions and an inbox page with mention counts in a constant number of statements', async () => {
    const bob = await someone();
    const groups = [];
    for (let i = 0; i < 12; i++) groups.push(await createGroup(alice, [bob.userId]));
    for (const [i, group] of groups.entries()) {
      await sent(alice, group.id, `named ${i}`, [bob.userId]);
      await sent(alice, group.id, `all ${i}`, null, true);
    }
    const small = await bob.gql(MENTIONS, { first: 2 });
    const large = await bob.gql(MENTIONS, { first: 24 });
    expect(large.data.viewer.mentions.edges).toHaveLength(24);
    expect(large.stats.statements).toBe(small.stats.statements);
    expect(large.stats.statements).toBeLessThanOrEqual(2);
    const fewChats = await bob.gql(INBOX, { first: 2 });
    const manyChats = await bob.gql(INBOX, { first: 12 });
    expect(manyChats.data.viewer.conversations.edges.map((e: any) => e.node.unreadMentionCount)).toEqual(Array(12).fill(2));
    expect(manyChats.stats.statements).toBe(fewChats.stats.statements);
    for (let i = 0; i < 20; i++) await sent(alice, groups[0]!.id, `more ${i}`, [bob.userId]);
    const shortPage = await bob.gql(PAGE, { id: groups[0]!.id, last: 2 });
    const longPage = await bob.gql(PAGE, { id: groups[0]!.id, last: 22 });
    expect(longPage.data.conversation.messages.edges).toHaveLength(22);
    expect(longPage.stats.statements).toBe(shortPage.stats.statements);
  });

  it('caps the unread mention count at 99', async () => {
    const bob = await someone();
    const group = await createGroup(alice, [bob.userId]);
    for (let i = 0; i < 98; i++) await sent(alice, group.id, `m${i}`, [bob.userId]);
    expect(await unreadMentions(bob, group.id)).toBe(98);
    await sent(alice, group.id, 'ninety-nine', null, true);
    expect(await unreadMentions(bob, group.id)).toBe(99);
    await sent(alice, group.id, 'one hundred', [bob.userId]);
    expect(await unreadMentions(bob, group.id)).toBe(99);
  });
});
