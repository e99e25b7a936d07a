/**
 * The GraphQL operations tests use, written once. Tests compose them with
 * the harness's clients.
 */
import { decodeConversationId } from '../../src/history/globalId.ts';
import type { Client } from './harness.ts';

export const PAGE_FIELDS = `
  edges { cursor node { id seq sender { id } content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt revokedBy { id } } } } }
  pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
  startSeq endSeq latestSeq anchorFound`;

export const MESSAGES = `query Page($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) { messages(first: $first, after: $after, last: $last, before: $before) { ${PAGE_FIELDS} } }
}`;

/** `MESSAGES` with the page's gaps too. */
export const MESSAGES_WITH_GAPS = `query Page($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) { messages(first: $first, after: $after, last: $last, before: $before) { ${PAGE_FIELDS} gaps { from to } } }
}`;

export const AROUND = `query Around($id: ID!, $messageId: ID!, $before: Int, $after: Int) {
  conversation(id: $id) { messagesAround(messageId: $messageId, before: $before, after: $after) { ${PAGE_FIELDS} } }
}`;

/** `messages` with every argument, `around` included. */
export const MESSAGES_AROUND = `query Page($id: ID!, $around: ID, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) { messages(around: $around, first: $first, after: $after, last: $last, before: $before) { ${PAGE_FIELDS} } }
}`;

export const CREATE_GROUP = `mutation Create($title: String, $memberIds: [ID!]!) {
  createConversation(input: { title: $title, memberIds: $memberIds }) { conversation { id kind title maxSeq readSeq } }
}`;

export const SEND = `mutation Send($conversationId: ID!, $clientMsgId: String!, $text: String!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text }) {
    deduplicated message { id seq sender { id } content { __typename ... on TextContent { text } } }
  }
}`;

export const REVOKE = `mutation Revoke($messageId: ID!) {
  revokeMessage(input: { messageId: $messageId }) {
    message { id seq content { __typename ... on RevokedContent { revokedAt revokedBy { id } } ... on TextContent { text } } }
  }
}`;

export const DELETE_FOR_ME = `mutation Hide($messageIds: [ID!]!) {
  deleteMessagesForMe(input: { messageIds: $messageIds }) { deletedCount }
}`;

export const CLEAR = `mutation Clear($conversationId: ID!) {
  clearHistory(input: { conversationId: $conversationId }) { clearedThroughSeq conversation { id maxSeq } }
}`;

export const MARK_READ = `mutation MarkRead($conversationId: ID!, $seq: Seq!) {
  markRead(input: { conversationId: $conversationId, seq: $seq }) { conversation { id readSeq } }
}`;

/** A page edge as the tests read it. */
export interface Edge {
  cursor: string;
  node: { id: string; seq: number; sender: { id: string }; content: { __typename: string; text?: string } };
}

/** Creates a group owned by `owner` with `memberIds`; returns its global id and uuid. */
export async function createGroup(owner: Client, memberIds: string[], title = 'test group'): Promise<{ id: string; uuid: string }> {
  const response = await owner.gql(CREATE_GROUP, { title, memberIds });
  if (response.errors) throw new Error(JSON.stringify(response.errors));
  const id = response.data.createConversation.conversation.id as string;
  return { id, uuid: decodeConversationId(id)! };
}

/** Sends `text` as `client`; returns the message's id and seq. */
export async function send(client: Client, conversationId: string, text: string, clientMsgId = `${client.userId}-${text}-${Math.random()}`) {
  const response = await client.gql(SEND, { conversationId, clientMsgId, text });
  if (response.errors) throw new Error(JSON.stringify(response.errors));
  return response.data.sendMessage.message as { id: string; seq: number };
}
