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
  'Query.viewer': "answers only the caller's own id, inbox (their memberships; inbox.test.ts) and announcements",
  'Mutation.publishAnnouncement': 'admin only (FORBIDDEN otherwise); announcements are for every user',
  'Mutation.markAnnouncementsRead': "moves only the caller's own read-up-to instant",
  'Mutation.createConversation': 'creates a new conversation owned by the caller',
  'Mutation.openDirectConversation': "opens the caller's own direct conversation",
  'Mutation.eraseUser': 'needs the admin role and answers FORBIDDEN to everyone else (lifecycle.test.ts); it reveals nothing about any conversation',
};

/** The secret things a non-member must never see, and the ids to probe with. */
interface Target {
  conversationId: string;
  messageId: string;
  secretText: string;
  title: string;
}

/** For each root field, operations that aim it at `target`. */
const CASES: Record<string, (t: Target) => { query: string; variables: Record<string, unknown> }[]> = {
  'Query.conversation': (t) => [
    { query: 'query ($id: ID!) { conversation(id: $id) { id title maxSeq readSeq } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { messages(last: 5) { edges { node { content { ... on TextContent { text } } } } latestSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!, $m: ID!) { conversation(id: $id) { messagesAround(messageId: $m) { edges { node { seq } } anchorFound } } }', variables: { id: t.conversationId, m: t.messageId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { messagesAt(time: "2000-01-01T00:00:00.000Z") { edges { node { seq } } gaps { from to } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { changes { changes { kind fromSeq } cursor goneThroughSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { retentionPolicy { days maxMessages expiredThroughSeq } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { conversation(id: $id) { lastMessage { seq } unreadCount lastActivityAt myRole historyVisibility } }', variables: { id: t.conversationId } },
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
  ],
  'Query.node': (t) => [
    { query: 'query ($id: ID!) { node(id: $id) { id ... on Conversation { title } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { node(id: $id) { id ... on Message { content { ... on TextContent { text } } } } }', variables: { id: t.messageId } },
  ],
  // Unscoped, a non-member's search simply finds nothing (search.test.ts); narrowed to the conversation it is NOT_FOUND.
  'Query.search': (t) => [
    { query: 'query ($id: ID!) { search(query: "launch code", conversationId: $id) { edges { node { seq content { ... on TextContent { text } } } snippet { text } } } }', variables: { id: t.conversationId } },
    { query: 'query ($id: ID!) { search(query: "0451", conversationId: $id, first: 100) { pageInfo { hasNextPage endCursor } } }', variables: { id: t.conversationId } },
  ],
  'Mutation.sendMessage': (t) => [
    { query: 'mutation ($id: ID!) { sendMessage(input: { conversationId: $id, clientMsgId: "intruder", text: "hi" }) { message { seq } } }', variables: { id: t.conversationId } },
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
  let carol: Client;
  let target: Target;
  /** Requests tried as an intruder; printed as the suite's figure. */
  let probes = 0;
  const STATE = `query ($id: ID!) { conversation(id: $id) { maxSeq readSeq messages(last: 10) { edges { node { seq content { __typename ... on TextContent { text } } } } } } }`;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    carol = await harness.client('carol');
    const group = await createGroup(alice, ['bob'], 'the secret project');
    const message = await send(alice, group.id, 'the launch code is 0451');
    target = { conversationId: group.id, messageId: message.id, secretText: 'the launch code is 0451', title: 'the secret project' };
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

  it.each(Object.keys(CASES))('%s answers an anonymous caller UNAUTHENTICATED', async (field) => {
    for (const { query, variables } of CASES[field]!(target)) {
      const response = await harness.post(JSON.stringify({ query, variables }));
      probes += 1;
      expect(codes(response)).toEqual(['UNAUTHENTICATED']);
      expect(response.text).not.toContain(target.secretText);
    }
  });
});
