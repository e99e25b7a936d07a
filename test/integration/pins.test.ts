import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { type LiveClient, liveClient, untilLive } from '../helpers/liveClient.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';

const PIN = `mutation ($id: ID!) { pinMessage(input: { messageId: $id }) { message { id } conversation { pinnedMessages { edges { node { id } } } } } }`;
const UNPIN = `mutation ($id: ID!) { unpinMessage(input: { messageId: $id }) { message { id } } }`;
const SETTINGS = `mutation ($id: ID!, $may: Boolean) { setConversationSettings(input: { conversationId: $id, membersMayPin: $may }) { conversation { membersMayPin } } }`;
const PINS = `query ($id: ID!, $first: Int, $after: String) {
  conversation(id: $id) { membersMayPin pinnedMessages(first: $first, after: $after) {
    edges { cursor pinnedAt pinnedBy { id } node { id } } pageInfo { hasNextPage hasPreviousPage endCursor } } }
}`;
const CHANGES = `query ($id: ID!, $after: String) { conversation(id: $id) { changes(after: $after) { changes { kind fromSeq message { id } } } } }`;
const CURSOR = `query ($id: ID!) { conversation(id: $id) { messages(last: 1) { changesCursor } } }`;
const OPEN_DIRECT = `mutation ($u: ID!) { openDirectConversation(userId: $u) { conversation { id } } }`;

describe.each(backends)('Pinned messages (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let eve: Client;
  let admin: Client;
  const sockets: LiveClient[] = [];

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    eve = await harness.client('eve');
    admin = await harness.client('moderator', { roles: ['admin'] });
  });
  afterAll(async () => {
    for (const socket of sockets) await socket.dispose();
    await harness.close();
  });

  const pinnedIds = async (client: Client, id: string, first = 50) => {
    const response = await client.gql(PINS, { id, first });
    expect(response.errors).toBeUndefined();
    return response.data.conversation.pinnedMessages.edges.map((e: any) => e.node.id);
  };

  it('lets the owner pin, lists pins newest first with who and when, and unpins', async () => {
    const group = await createGroup(alice, ['bob']);
    const a = await send(bob, group.id, 'pin a');
    const b = await send(bob, group.id, 'pin b');
    expect((await alice.gql(PIN, { id: a.id })).errors).toBeUndefined();
    const pinnedB = await alice.gql(PIN, { id: b.id });
    expect(pinnedB.data.pinMessage.conversation.pinnedMessages.edges.map((e: any) => e.node.id)).toEqual([b.id, a.id]);
    const seen = await bob.gql(PINS, { id: group.id, first: 1 });
    const edge = seen.data.conversation.pinnedMessages.edges[0];
    expect(edge).toMatchObject({ node: { id: b.id }, pinnedBy: { id: 'alice' }, pinnedAt: expect.stringMatching(/Z$/) });
    const rest = await bob.gql(PINS, { id: group.id, first: 1, after: seen.data.conversation.pinnedMessages.pageInfo.endCursor });
    expect(rest.data.conversation.pinnedMessages.edges.map((e: any) => e.node.id)).toEqual([a.id]);
    expect(rest.data.conversation.pinnedMessages.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    // Pinning again changes nothing; unpinning twice is harmless.
    await alice.gql(PIN, { id: a.id });
    expect(await pinnedIds(bob, group.id)).toEqual([b.id, a.id]);
    expect((await alice.gql(UNPIN, { id: a.id })).errors).toBeUndefined();
    expect((await alice.gql(UNPIN, { id: a.id })).errors).toBeUndefined();
    expect(await pinnedIds(bob, group.id)).toEqual([b.id]);
  });

  it('lets members pin only when the owner allows it, and admins always', async () => {
    const group = await createGroup(alice, ['bob', 'moderator']);
    const m = await send(alice, group.id, 'who may pin');
    expect(codes(await bob.gql(PIN, { id: m.id }))).toEqual(['FORBIDDEN']);
    expect(codes(await bob.gql(SETTINGS, { id: group.id, may: true }))).toEqual(['FORBIDDEN']);
    expect((await admin.gql(PIN, { id: m.id })).errors).toBeUndefined();
    expect((await admin.gql(UNPIN, { id: m.id })).errors).toBeUndefined();
    const set = await alice.gql(SETTINGS, { id: group.id, may: true });
    expect(set.data.setConversationSettings.conversation.membersMayPin).toBe(true);
    expect((await bob.gql(PIN, { id: m.id })).errors).toBeUndefined();
    expect(await pinnedIds(alice, group.id)).toEqual([m.id]);
    // Leaving the setting out leaves it as it is.
    expect((await alice.gql(SETTINGS, { id: group.id })).data.setConversationSettings.conversation.membersMayPin).toBe(true);
  });

  it('lets both sides of a direct conversation pin, which has no settings to change', async () => {
    const direct = (await alice.gql(OPEN_DIRECT, { u: 'bob' })).data.openDirectConversation.conversation.id;
    const m = await send(bob, direct, 'direct pin');
    expect((await bob.gql(PIN, { id: m.id })).errors).toBeUndefined();
    expect((await bob.gql(PINS, { id: direct })).data.conversation.membersMayPin).toBe(true);
    expect(codes(await alice.gql(SETTINGS, { id: direct, may: false }))).toEqual(['BAD_USER_INPUT']);
  });

  it('holds at most 50 pins, refuses revoked messages, and drops the pin of one revoked later', async () => {
    const group = await createGroup(alice, ['bob']);
    const sent = [];
    for (let i = 0; i < 51; i++) sent.push(await send(alice, group.id, `p${i}`));
    for (let i = 0; i < 50; i++) expect((await alice.gql(PIN, { id: sent[i]!.id })).errors).toBeUndefined();
    const over = await alice.gql(PIN, { id: sent[50]!.id });
    expect(codes(over)).toEqual(['BAD_USER_INPUT']);
    await alice.gql(REVOKE, { messageId: sent[0]!.id });
    expect(await pinnedIds(bob, group.id)).not.toContain(sent[0]!.id);
    expect((await pinnedIds(bob, group.id)).length).toBe(49);
    expect(codes(await alice.gql(PIN, { id: sent[0]!.id }))).toEqual(['BAD_USER_INPUT']);
    expect((await alice.gql(PIN, { id: sent[50]!.id })).errors).toBeUndefined();
  });

  it('shows each member the pins they can see, and a non-member nothing', async () => {
    const group = await createGroup(alice, ['bob']);
    const hidden = await send(alice, group.id, 'bob hides this');
    await alice.gql(PIN, { id: hidden.id });
    await bob.gql(DELETE_FOR_ME, { messageIds: [hidden.id] });
    expect(await pinnedIds(alice, group.id)).toEqual([hidden.id]);
    expect(await pinnedIds(bob, group.id)).toEqual([]);
    const later = await send(alice, group.id, 'after the clear');
    await bob.gql(CLEAR, { conversationId: group.id });
    await alice.gql(PIN, { id: later.id });
    expect(await pinnedIds(bob, group.id)).toEqual([]);
    expect(codes(await eve.gql(PINS, { id: group.id }))).toEqual(['NOT_FOUND']);
    expect(codes(await eve.gql(PIN, { id: later.id }))).toEqual(['NOT_FOUND']);
  });

  it('reports pins in the change feed and live', async () => {
    const group = await createGroup(alice, ['bob']);
    const m = await send(alice, group.id, 'watched pin');
    const start = (await bob.gql(CURSOR, { id: group.id })).data.conversation.messages.changesCursor;
    const socket = liveClient(harness.server.url, { authorization: `Bearer ${bob.token}` });
    sockets.push(socket);
    const events = socket.subscribe('subscription ($id: ID!) { conversationEvents(conversationId: $id) { kind seq message { id } } }', { id: group.id });
    await untilLive(events, async () => (await send(alice, group.id, 'poke')).seq);
    await alice.gql(PIN, { id: m.id });
    let event = (await events.next()).data.conversationEvents;
    while (event.kind === 'MESSAGE_SENT') event = (await events.next()).data.conversationEvents;
    expect(event).toEqual({ kind: 'MESSAGE_PINNED', seq: m.seq, message: { id: m.id } });
    await alice.gql(UNPIN, { id: m.id });
    expect((await events.next()).data.conversationEvents).toEqual({ kind: 'MESSAGE_UNPINNED', seq: m.seq, message: { id: m.id } });
    const feed = await bob.gql(CHANGES, { id: group.id, after: start });
    expect(feed.data.conversation.changes.changes).toEqual([
      { kind: 'PINNED', fromSeq: m.seq, message: { id: m.id } },
      { kind: 'UNPINNED', fromSeq: m.seq, message: { id: m.id } },
    ]);
  });
});
