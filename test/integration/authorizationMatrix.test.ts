/**
 * Every root field that can reach conversation data, tried by a non-member
 * and by an anonymous caller: nothing but NOT_FOUND (or UNAUTHENTICATED),
 * no content, no existence signal, nothing changed. The list of fields comes
 * from schema.graphql, so a new field without a case here fails the suite.
 */
import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { liveClient } from '../helpers/liveClient.ts';
import { createGroup, send } from '../helpers/operations.ts';

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
const rootFields = [
  ...Object.keys(schema.getQueryType()!.getFields()).map((f) => `Query.${f}`),
  ...Object.keys(schema.getMutationType()!.getFields()).map((f) => `Mutation.${f}`),
  ...Object.keys(schema.getSubscriptionType()!.getFields()).map((f) => `Subscription.${f}`),
];

/** Root fields that never reach another user's conversation data, and why. */
const EXEMPT: Record<string, string> = {
  'Query.viewer': "answers only the caller's own id, inbox (their memberships; inbox.test.ts), announcements, starred messages and mentions (stars.test.ts, mentions.test.ts: a conversation left drops out)",
  'Mutation.publishAnnouncement': 'admin only (FORBIDDEN otherwise); announcements are for every user',
  'Mutation.markAnnouncementsRead': "moves only the caller's own read-up-to instant",
  'Mutation.createConversation': 'creates a new conversation owned by the caller',
  'Mutation.openDirectConversation': "opens the caller's own direct conversation",
  'Mutation.eraseUser': 'needs the admin role and answers FORBIDDEN to everyone else (lifecycle.test.ts); it reveals nothing about any conversation',
};

/** The secret things a non-member must never see, and the ids to probe with. */
interface Target {
  conversationId: string;
  /** A thread's root, edited once (its earlier version holds the secret too), with a reply and a reaction. */
  messageId: string;
  /** A member's reply to `messageId`. */
  replyId: string;
  secretText: string;
  title: string;
  /** The reaction on `messageId`, a shortcode no probe uses, so finding it in an answer is a leak. */
  reaction: string;
}

/** Every field a message gained with edits, replies and reactions, each with something to show on the target. */
const MESSAGE_THREAD_FIELDS = `editedAt edits { edges { cursor node { text editedAt } } }
  replyTo { content { ... on TextContent { text } } } replyToUnavailable threadRoot { seq }
  replyCount replies(last: 5) { edges { node { readCount content { ... on TextContent { text } } } } }
  threadUnreadCount reactions { reaction count reactedByMe users { edges { node { id } } } }
  mentions { id } mentionsEveryone`;

/** For each root field, operations that aim it at `target`. */
const CASES: Record<string, (t: Target) => { query: string; variables: Record<string, unknown> }[]> = {
  'Query.conversation': (t) => [
    { query: 'query ($id: ID!) { conversation(id: $id) { id title maxSeq readSeq } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { messages(last: 5) { edges { node { content { ... on TextContent { text } } } } latestSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!, $m: ID!) { conversation(id: $id) { messagesAround(messageId: $m) { edges { node { seq } } anchorFound } } }', variables: { id: t.conversationId, m: t.messageId } },
    // Receipts are counted by the page statement itself (src/store/pageReceipts.ts).
    { query: 'query ($id: ID!) { conversation(id: $id) { messages(last: 5) { edges { node { seq readCount } } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!, $m: ID!) { conversation(id: $id) { messagesAround(messageId: $m) { edges { node { readCount } } } } }', variables: { id: t.conversationId, m: t.messageId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { messagesAt(time: "2000-01-01T00:00:00.000Z") { edges { node { seq } } gaps { from to } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { changes { changes { kind fromSeq } cursor goneThroughSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { retentionPolicy { days maxMessages expiredThroughSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { lastMessage { seq } unreadCount lastActivityAt myRole historyVisibility } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { unreadMentionCount } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { firstUnreadMessage { seq content { ... on TextContent { text } } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { membersMayPin pinnedMessages { edges { pinnedBy { id } node { seq } } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { messages(aroundFirstUnread: true) { edges { node { seq } } firstUnreadSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { members { edges { node { user { id } role } } } } }', variables: { id: t.conversationId } },
  ],
  'Mutation.addMembers': (t) => [
    { query: 'mutation ($id: ID!) { addMembers(input: { conversationId: $id, userIds: ["carol"] }) { addedCount } }', variables: { id: t.conversationId } },
  ],
  'Mutation.removeMember': (t) => [
    { query: 'mutation ($id: ID!) { removeMember(input: { conversationId: $id, userId: "bob" }) { conversation { id } } }', variables: { id: t.conversationId } },
  ],
  'Mutation.leaveConversation': (t) => [
    { query: 'mutation ($id: ID!) { leaveConversation(input: { conversationId: $id }) { conversationId } }', variables: { id: t.conversationId } },
  ],
  'Mutation.setHistoryVisibility': (t) => [
    { query: 'mutation ($id: ID!) { setHistoryVisibility(input: { conversationId: $id, historyVisibility: SINCE_JOINED }) { conversation { id } } }', variables: { id: t.conversationId } },
  ],
  'Query.message': (t) => [
    { query: 'query ($id: ID!) { message(id: $id) { seq content { ... on TextContent { text } } conversation { title } } }', variables: { id: t.messageId } },
    { query: `query ($id: ID!) { message(id: $id) { ${MESSAGE_THREAD_FIELDS} } }`, variables: { id: t.messageId } },
    { query: `query ($id: ID!) { message(id: $id) { ${MESSAGE_THREAD_FIELDS} } }`, variables: { id: t.replyId } },
  ],
  'Query.node': (t) => [
    { query: 'query ($id: ID!) { node(id: $id) { id ... on Conversation { title } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { node(id: $id) { id ... on Message { content { ... on TextContent { text } } } } }', variables: { id: t.messageId } },
    { query: `query ($id: ID!) { node(id: $id) { id ... on Message { ${MESSAGE_THREAD_FIELDS} } } }`, variables: { id: t.messageId } },
    { query: `query ($id: ID!) { node(id: $id) { id ... on Message { ${MESSAGE_THREAD_FIELDS} } } }`, variables: { id: t.replyId } },
  ],
  // Unscoped, a non-member's search simply finds nothing (search.test.ts); narrowed to the conversation it is NOT_FOUND.
  'Query.search': (t) => [
    { query: 'query ($id: ID!) { search(query: "launch code", conversationId: $id) { edges { node { seq content { ... on TextContent { text } } } snippet { text } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { search(query: "0451", conversationId: $id, first: 100) { pageInfo { hasNextPage endCursor } } }', variables: { id: t.conversationId } },
    // Named in the filter, with words or without, and with conditions its messages meet: NOT_FOUND all the same.
    { query: 'query ($id: ID!) { search(filter: { conversationId: $id }) { edges { node { seq content { ... on TextContent { text } } } snippet { text } } } }', variables: { id: t.conversationId } },
    {
      query: 'query ($id: ID!) { search(query: "launch", conversationId: $id, filter: { conversationId: $id, senderIds: ["alice"], hasReplies: true }) { edges { snippet { text } } } }',
      variables: { id: t.conversationId },
    },
  ],
  'Mutation.sendMessage': (t) => [
    { query: 'mutation ($id: ID!) { sendMessage(input: { conversationId: $id, clientMsgId: "intruder", text: "hi" }) { message { seq } } }', variables: { id: t.conversationId } },
    {
      query: 'mutation ($id: ID!, $m: ID!) { sendMessage(input: { conversationId: $id, clientMsgId: "intruder-reply", text: "hi", replyToMessageId: $m }) { message { seq } } }',
      variables: { id: t.conversationId, m: t.messageId },
    },
    // A member naming a non-member would be BAD_USER_INPUT, and mentioning everyone FORBIDDEN: a non-member must learn neither.
    { query: 'mutation ($id: ID!) { sendMessage(input: { conversationId: $id, clientMsgId: "intruder-mention", text: "hi", mentionUserIds: ["bob", "dave"] }) { message { seq } } }', variables: { id: t.conversationId } },
    { query: 'mutation ($id: ID!) { sendMessage(input: { conversationId: $id, clientMsgId: "intruder-all", text: "hi", mentionEveryone: true }) { message { seq } } }', variables: { id: t.conversationId } },
  ],
  'Mutation.editMessage': (t) => [
    { query: 'mutation ($id: ID!) { editMessage(input: { messageId: $id, text: "hijacked" }) { message { seq editedAt } } }', variables: { id: t.messageId } },
    { query: 'mutation ($id: ID!) { editMessage(input: { messageId: $id, text: "hijacked" }) { message { seq } } }', variables: { id: t.replyId } },
  ],
  'Mutation.addReaction': (t) => [
    { query: 'mutation ($id: ID!) { addReaction(input: { messageId: $id, reaction: "👀" }) { message { reactions { reaction count } } } }', variables: { id: t.messageId } },
    // Already on the message: an idempotent add must not answer differently for a reaction that is there.
    { query: 'mutation ($id: ID!, $r: String!) { addReaction(input: { messageId: $id, reaction: $r }) { message { seq } } }', variables: { id: t.messageId, r: t.reaction } },
  ],
  'Mutation.removeReaction': (t) => [
    { query: 'mutation ($id: ID!, $r: String!) { removeReaction(input: { messageId: $id, reaction: $r }) { message { reactions { reaction count } } } }', variables: { id: t.messageId, r: t.reaction } },
    { query: 'mutation ($id: ID!) { removeReaction(input: { messageId: $id, reaction: "👀" }) { message { seq } } }', variables: { id: t.replyId } },
  ],
  'Mutation.markThreadRead': (t) => [
    { query: 'mutation ($id: ID!) { markThreadRead(input: { messageId: $id, seq: 1 }) { message { threadUnreadCount replyCount } } }', variables: { id: t.messageId } },
    // A reply and a seq past maxSeq would each be BAD_USER_INPUT to a member: a non-member must not learn which.
    { query: 'mutation ($id: ID!) { markThreadRead(input: { messageId: $id, seq: 1 }) { message { seq } } }', variables: { id: t.replyId } },
    { query: 'mutation ($id: ID!) { markThreadRead(input: { messageId: $id, seq: 1000000 }) { message { seq } } }', variables: { id: t.messageId } },
  ],
  'Mutation.starMessage': (t) => [
    { query: 'mutation ($id: ID!) { starMessage(input: { messageId: $id }) { message { starredByMe content { ... on TextContent { text } } } } }', variables: { id: t.messageId } },
  ],
  'Mutation.unstarMessage': (t) => [
    { query: 'mutation ($id: ID!) { unstarMessage(input: { messageId: $id }) { message { starredByMe } } }', variables: { id: t.messageId } },
  ],
  'Mutation.pinMessage': (t) => [
    { query: 'mutation ($id: ID!) { pinMessage(input: { messageId: $id }) { message { content { ... on TextContent { text } } } conversation { pinnedMessages { edges { node { seq } } } } } }', variables: { id: t.messageId } },
  ],
  'Mutation.unpinMessage': (t) => [
    { query: 'mutation ($id: ID!) { unpinMessage(input: { messageId: $id }) { message { seq } } }', variables: { id: t.messageId } },
  ],
  'Mutation.setConversationSettings': (t) => [
    { query: 'mutation ($id: ID!) { setConversationSettings(input: { conversationId: $id, membersMayPin: true }) { conversation { membersMayPin } } }', variables: { id: t.conversationId } },
  ],
  'Mutation.markUnread': (t) => [
    { query: 'mutation ($id: ID!) { markUnread(input: { messageId: $id }) { conversation { readSeq unreadCount firstUnreadMessage { seq } } } }', variables: { id: t.messageId } },
  ],
  'Mutation.revokeMessage': (t) => [
    { query: 'mutation ($id: ID!) { revokeMessage(input: { messageId: $id }) { message { seq } } }', variables: { id: t.messageId } },
  ],
  'Mutation.deleteMessagesForMe': (t) => [
    { query: 'mutation ($id: ID!) { deleteMessagesForMe(input: { messageIds: [$id] }) { deletedCount } }', variables: { id: t.messageId } },
  ],
  'Mutation.clearHistory': (t) => [
    { query: 'mutation ($id: ID!) { clearHistory(input: { conversationId: $id }) { clearedThroughSeq } }', variables: { id: t.conversationId } },
  ],
  'Mutation.setRetentionPolicy': (t) => [
    { query: 'mutation ($id: ID!) { setRetentionPolicy(input: { conversationId: $id, days: 1 }) { conversation { id } } }', variables: { id: t.conversationId } },
  ],
  'Mutation.purgeMessages': (t) => [
    { query: 'mutation ($id: ID!) { purgeMessages(input: { messageIds: [$id] }) { purgedCount } }', variables: { id: t.messageId } },
  ],
  'Mutation.markRead': (t) => [
    { query: 'mutation ($id: ID!) { markRead(input: { conversationId: $id, seq: 1 }) { conversation { readSeq } } }', variables: { id: t.conversationId } },
  ],
};

const EDIT = 'mutation ($id: ID!, $text: String!) { editMessage(input: { messageId: $id, text: $text }) { message { seq } } }';
const REACT = 'mutation ($id: ID!, $r: String!) { addReaction(input: { messageId: $id, reaction: $r }) { message { seq } } }';
const UNREACT = 'mutation ($id: ID!, $r: String!) { removeReaction(input: { messageId: $id, reaction: $r }) { message { seq } } }';
const REPLY =
  'mutation ($c: ID!, $m: ID!) { sendMessage(input: { conversationId: $c, clientMsgId: "reply", text: "confirmed: the launch code is 0451", replyToMessageId: $m, mentionUserIds: ["alice"] }) { message { id } } }';
const MARK_THREAD_READ = 'mutation ($id: ID!, $seq: Seq!) { markThreadRead(input: { messageId: $id, seq: $seq }) { message { seq threadUnreadCount } } }';

/** Subscription fields, aimed at `target` over WebSocket. */
const SUBSCRIPTION_CASES: Record<string, (t: Target) => { query: string; variables: Record<string, unknown> }> = {
  'Subscription.conversationEvents': (t) => ({
    query: 'subscription ($id: ID!) { conversationEvents(conversationId: $id) { kind seq message { content { ... on TextContent { text } } } } }',
    variables: { id: t.conversationId },
  }),
};

describe('The authorization matrix covers the schema', () => {
  it('has a case or a stated exemption for every root field', () => {
    const uncovered = rootFields.filter((field) => !(field in CASES) && !(field in EXEMPT) && !(field in SUBSCRIPTION_CASES));
    expect(uncovered).toEqual([]);
  });
});

describe.each(backends)('Authorization matrix (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let target: Target;
  /** Requests tried as an intruder; printed as the suite's figure. */
  let probes = 0;
  const STATE = `query ($id: ID!) { conversation(id: $id) { maxSeq readSeq messages(last: 10) { edges { node {
    seq editedAt content { __typename ... on TextContent { text } } edits { edges { node { text } } }
    replyCount threadUnreadCount reactions { reaction count users { edges { node { id } } } } mentions { id }
  } } } unreadMentionCount } }`;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    const group = await createGroup(alice, ['bob'], 'the secret project');
    const message = await send(alice, group.id, 'the launch code is 0451 (draft)');
    const reaction = ':rocket_launch:';
    const setUp = [
      await alice.gql(EDIT, { id: message.id, text: 'the launch code is 0451' }),
      await bob.gql(REACT, { id: message.id, r: reaction }),
      await bob.gql(REPLY, { c: group.id, m: message.id }),
    ];
    expect(setUp.map(codes)).toEqual([[], [], []]);
    target = {
      conversationId: group.id,
      messageId: message.id,
      replyId: setUp[2]!.data.sendMessage.message.id,
      secretText: 'the launch code is 0451',
      title: 'the secret project',
      reaction,
    };
  });
  afterAll(async () => {
    await harness.close();
    const checked = Object.keys(CASES).length + Object.keys(SUBSCRIPTION_CASES).length;
    console.log(`authz (${backend}): 0 leaks over ${probes} intruder requests on ${checked} root fields (${Object.keys(EXEMPT).length} exempt)`);
  });

  it.each(Object.keys(CASES))('%s answers a non-member NOT_FOUND and nothing else, changing nothing', async (field) => {
    const before = await alice.gql(STATE, { id: target.conversationId });
    for (const { query, variables } of CASES[field]!(target)) {
      const response = await carol.gql(query, variables);
      probes += 1;
      expect({ field, query, codes: codes(response) }).toEqual({ field, query, codes: ['NOT_FOUND'] });
      expect(response.text).not.toContain(target.secretText);
      expect(response.text).not.toContain(target.title);
      expect(response.text).not.toContain(target.reaction);
    }
    expect((await alice.gql(STATE, { id: target.conversationId })).data).toEqual(before.data);
  });

  it.each(Object.keys(SUBSCRIPTION_CASES))('%s answers a non-member NOT_FOUND and an anonymous socket 4401, delivering nothing', async (field) => {
    const { query, variables } = SUBSCRIPTION_CASES[field]!(target);
    const intruder = liveClient(harness.server.url, { authorization: `Bearer ${carol.token}` });
    const anonymous = liveClient(harness.server.url);
    try {
      const refused = intruder.subscribe(query, variables);
      expect(await refused.next()).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
      expect(await anonymous.subscribe(query, variables).ended).toMatchObject({ kind: 'closed', code: 4401 });
      probes += 2;
      // A message sent now reaches neither.
      await send(alice, target.conversationId, 'after the probes');
      expect(JSON.stringify(refused.received)).not.toContain(target.secretText);
      expect(refused.received).toHaveLength(1);
    } finally {
      await Promise.all([intruder.dispose(), anonymous.dispose()]);
    }
  });

  it('answers a member FORBIDDEN for editing a message they did not send, and lets every member react and mark a thread read', async () => {
    const before = await alice.gql(STATE, { id: target.conversationId });
    const refused = [await bob.gql(EDIT, { id: target.messageId, text: 'bob was here' }), await alice.gql(EDIT, { id: target.replyId, text: 'alice was here' })];
    expect(refused.map((response) => ({ codes: codes(response), data: response.data }))).toEqual([
      { codes: ['FORBIDDEN'], data: null },
      { codes: ['FORBIDDEN'], data: null },
    ]);
    expect((await alice.gql(STATE, { id: target.conversationId })).data).toEqual(before.data);

    const maxSeq = before.data.conversation.maxSeq as number;
    const allowed = [
      await bob.gql(REACT, { id: target.messageId, r: '👀' }),
      await alice.gql(REACT, { id: target.replyId, r: '👀' }),
      await bob.gql(MARK_THREAD_READ, { id: target.messageId, seq: maxSeq }),
      await alice.gql(MARK_THREAD_READ, { id: target.messageId, seq: maxSeq }),
      await bob.gql(UNREACT, { id: target.messageId, r: '👀' }),
      await alice.gql(UNREACT, { id: target.replyId, r: '👀' }),
    ];
    expect(allowed.map(codes)).toEqual([[], [], [], [], [], []]);
    expect(allowed.slice(2, 4).map((response) => response.data.markThreadRead.message)).toEqual([
      { seq: 1, threadUnreadCount: 0 },
      { seq: 1, threadUnreadCount: 0 },
    ]);
  });

  it.each(Object.keys(CASES))('%s answers an anonymous caller UNAUTHENTICATED', async (field) => {
    for (const { query, variables } of CASES[field]!(target)) {
      const response = await harness.post(JSON.stringify({ query, variables }));
      probes += 1;
      expect(codes(response)).toEqual(['UNAUTHENTICATED']);
      expect(response.text).not.toContain(target.secretText);
    }
  });
});
