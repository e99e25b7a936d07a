/**
 * A retried send (the same `clientMsgId`) stores nothing new and answers the
 * first copy exactly as a read would show it now: revoked as
 * `RevokedContent`, erased as `PurgedContent`, and, once the sender can no
 * longer see it at all (history cleared, deleted for them, expired),
 * `NOT_FOUND` with `extensions.reason` `DEDUPLICATED_MESSAGE_NOT_VISIBLE`,
 * never its text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, type GraphQLResponse, type Harness, startHarness } from '../helpers/harness.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, REVOKE } from '../helpers/operations.ts';

const MESSAGE_FIELDS = `id seq sender { id } content { __typename
  ... on TextContent { text } ... on RevokedContent { revokedAt revokedBy { id } } ... on PurgedContent { purgedAt } }`;
const SEND = `mutation ($c: ID!, $k: String!, $t: String!) {
  sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $t }) { deduplicated message { ${MESSAGE_FIELDS} } } }`;
const READ = `query ($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`;
const MAX_SEQ = 'query ($id: ID!) { conversation(id: $id) { maxSeq } }';
const SET_RETENTION = `mutation ($c: ID!, $maxMessages: Int) {
  setRetentionPolicy(input: { conversationId: $c, maxMessages: $maxMessages }) { conversation { id } } }`;
const ERASE = 'mutation ($u: ID!) { eraseUser(input: { userId: $u }) { erasedCount } }';

/** What a client learns from an answer: its data and each error's code, reason and path. */
const answerOf = (response: GraphQLResponse) => ({
  data: response.data,
  errors: response.errors?.map((e) => ({ code: e.extensions?.code, reason: e.extensions?.reason, path: e.path })),
});

const NOT_VISIBLE = {
  data: null,
  errors: [{ code: 'NOT_FOUND', reason: 'DEDUPLICATED_MESSAGE_NOT_VISIBLE', path: ['sendMessage'] }],
};

describe.each(backends)('A retried send answers the first copy as reads show it (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let admin: Client;

  /** A group of alice's with one message from `sender` under clientMsgId "k"; its id and the message's. */
  const groupWithMessage = async (sender = alice) => {
    const group = await createGroup(alice, ['bob', 'eraseme']);
    const first = await sender.gql(SEND, { c: group.id, k: 'k', t: 'the first copy' });
    if (first.errors) throw new Error(JSON.stringify(first.errors));
    return { groupId: group.id, messageId: first.data.sendMessage.message.id as string };
  };
  /** The retry with another text, what a read of the message answers, and the conversation's maxSeq after both. */
  const retryAndRead = async (groupId: string, messageId: string, sender = alice) => {
    const retry = answerOf(await sender.gql(SEND, { c: groupId, k: 'k', t: 'a retry must not store this' }));
    const read = answerOf(await sender.gql(READ, { id: messageId }));
    const maxSeq = (await alice.gql(MAX_SEQ, { id: groupId })).data.conversation.maxSeq as number;
    return { retry, read, maxSeq };
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    admin = await harness.client('ops', { roles: ['admin'] });
  });
  afterAll(() => harness.close());

  it('answers a visible first copy exactly as message(id:) reads it, with deduplicated: true', async () => {
    const { groupId, messageId } = await groupWithMessage();
    const { retry, read, maxSeq } = await retryAndRead(groupId, messageId);
    expect({ retry, maxSeq }).toEqual({ retry: { data: { sendMessage: { deduplicated: true, message: read.data.message } }, errors: undefined }, maxSeq: 1 });
    expect(read.data.message.content).toEqual({ __typename: 'TextContent', text: 'the first copy' });
  });

  it('answers a revoked first copy as RevokedContent, never its text', async () => {
    const { groupId, messageId } = await groupWithMessage();
    expect((await alice.gql(REVOKE, { messageId })).errors).toBeUndefined();
    const { retry, read, maxSeq } = await retryAndRead(groupId, messageId);
    expect({ retry, maxSeq, content: read.data.message.content.__typename }).toEqual({
      retry: { data: { sendMessage: { deduplicated: true, message: read.data.message } }, errors: undefined },
      maxSeq: 1,
      content: 'RevokedContent',
    });
  });

  it("answers an erased first copy as PurgedContent, never its text", async () => {
    const eraseme = await harness.client('eraseme');
    const { groupId, messageId } = await groupWithMessage(eraseme);
    expect((await admin.gql(ERASE, { u: 'eraseme' })).errors).toBeUndefined();
    const { retry, read, maxSeq } = await retryAndRead(groupId, messageId, eraseme);
    expect({ retry, maxSeq, content: read.data.message.content.__typename }).toEqual({
      retry: { data: { sendMessage: { deduplicated: true, message: read.data.message } }, errors: undefined },
      maxSeq: 1,
      content: 'PurgedContent',
    });
  });

  it('answers NOT_FOUND (DEDUPLICATED_MESSAGE_NOT_VISIBLE) and stores nothing once the sender cleared their history', async () => {
    const { groupId, messageId } = await groupWithMessage();
    expect((await alice.gql(CLEAR, { conversationId: groupId })).errors).toBeUndefined();
    expect(await retryAndRead(groupId, messageId)).toEqual({
      retry: NOT_VISIBLE,
      read: { data: { message: null }, errors: [{ code: 'NOT_FOUND', reason: undefined, path: ['message'] }] },
      maxSeq: 1,
    });
  });

  it('answers NOT_FOUND (DEDUPLICATED_MESSAGE_NOT_VISIBLE) and stores nothing once the sender deleted it for themselves', async () => {
    const { groupId, messageId } = await groupWithMessage();
    expect((await alice.gql(DELETE_FOR_ME, { messageIds: [messageId] })).errors).toBeUndefined();
    expect(await retryAndRead(groupId, messageId)).toEqual({
      retry: NOT_VISIBLE,
      read: { data: { message: null }, errors: [{ code: 'NOT_FOUND', reason: undefined, path: ['message'] }] },
      maxSeq: 1,
    });
  });

  it('answers NOT_FOUND (DEDUPLICATED_MESSAGE_NOT_VISIBLE) and stores nothing once it expired under the group’s retention policy', async () => {
    const { groupId, messageId } = await groupWithMessage();
    expect((await alice.gql(SET_RETENTION, { c: groupId, maxMessages: 2 })).errors).toBeUndefined();
    for (const k of ['k2', 'k3', 'k4']) expect((await alice.gql(SEND, { c: groupId, k, t: k })).errors).toBeUndefined();
    expect(await retryAndRead(groupId, messageId)).toEqual({
      retry: NOT_VISIBLE,
      read: { data: { message: null }, errors: [{ code: 'NOT_FOUND', reason: undefined, path: ['message'] }] },
      maxSeq: 4,
    });
  });

  it('still answers other members their own view: bob, who cleared nothing, reads the first copy', async () => {
    const { groupId, messageId } = await groupWithMessage();
    expect((await alice.gql(CLEAR, { conversationId: groupId })).errors).toBeUndefined();
    const bob = await harness.client('bob');
    expect(answerOf(await bob.gql(READ, { id: messageId })).data.message.content).toEqual({ __typename: 'TextContent', text: 'the first copy' });
  });
});
