/**
 * The benchmark's scenarios, shared by the orchestrator and the load
 * processes: the GraphQL operation of each, and the raw SQL that is its
 * physical floor on this stack.
 */
import { signToken } from '../src/auth/tokens.ts';
import { encodeCursor } from '../src/history/cursor.ts';
import { conversationGlobalId, messageGlobalId } from '../src/history/globalId.ts';
import { BENCH_DATA, benchConversationId, benchMembers, HOT_CONVERSATION_ID } from '../src/seed/benchData.ts';

export const PAGE_SIZE = 50;
/** How deep (c) and (d) read in the hot conversation: 400,000 below its newest message. */
const DEEP_SEQ = BENCH_DATA.hotMessages - 400_000;

const PAGE_SELECTION = `edges { cursor node { id seq createdAt sender { id }
    content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt revokedBy { id } } } } }
  pageInfo { hasPreviousPage hasNextPage startCursor endCursor } startSeq endSeq latestSeq`;

export const PAGE_QUERY = `query Page($id: ID!, $before: String) {
  conversation(id: $id) { messages(last: ${PAGE_SIZE}, before: $before) { ${PAGE_SELECTION} } }
}`;

const AROUND_QUERY = `query Around($id: ID!, $messageId: ID!) {
  conversation(id: $id) { messagesAround(messageId: $messageId, before: ${PAGE_SIZE / 2}, after: ${PAGE_SIZE / 2 - 1}) { ${PAGE_SELECTION} anchorFound } }
}`;

const SEND_MUTATION = `mutation Send($conversationId: ID!, $clientMsgId: String!, $text: String!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text }) { deduplicated message { id seq createdAt } }
}`;

export type PageScenario = 'random-newest' | 'hot-newest' | 'hot-deep' | 'hot-around';
export type SendScenario = 'send-hot' | 'send-spread';

/** One request of a scenario: who asks (their user id) and the GraphQL body. */
export interface ScenarioRequest {
  userId: string;
  body: string;
  /** For the raw SQL twin: the conversation and the seq bound. */
  convId: string;
  seq: number | null;
}

/** Picks conversation `i` of the non-hot ones, from 1 to conversations - 1. */
const randomConversation = (): number => 1 + Math.floor(Math.random() * (BENCH_DATA.conversations - 1));

/** Makes the next request of a page scenario. */
export function pageRequest(scenario: PageScenario): ScenarioRequest {
  const i = scenario === 'random-newest' ? randomConversation() : 0;
  const convId = benchConversationId(i);
  // The owner (first member) sees everything; the second member has hidden messages.
  const userId = benchMembers(i, BENCH_DATA)[1]!;
  const id = conversationGlobalId(convId);
  switch (scenario) {
    case 'random-newest':
    case 'hot-newest':
      return { userId, convId, seq: null, body: JSON.stringify({ query: PAGE_QUERY, variables: { id } }) };
    case 'hot-deep':
      return {
        userId,
        convId,
        seq: DEEP_SEQ + 1,
        body: JSON.stringify({ query: PAGE_QUERY, variables: { id, before: encodeCursor(HOT_CONVERSATION_ID, DEEP_SEQ + 1) } }),
      };
    case 'hot-around':
      return {
        userId,
        convId,
        seq: DEEP_SEQ,
        body: JSON.stringify({ query: AROUND_QUERY, variables: { id, messageId: messageGlobalId(HOT_CONVERSATION_ID, DEEP_SEQ) } }),
      };
  }
}

let sendCounter = 0;
const runId = Math.random().toString(36).slice(2, 8);

/** Makes the next request of a send scenario: the hot conversation, or one of the first 1,000. */
export function sendRequest(scenario: SendScenario): ScenarioRequest {
  const i = scenario === 'send-hot' ? 0 : 1 + (sendCounter % 1000);
  sendCounter += 1;
  const convId = benchConversationId(i);
  const userId = benchMembers(i, BENCH_DATA)[sendCounter % BENCH_DATA.membersPerConversation]!;
  const variables = {
    conversationId: conversationGlobalId(convId),
    clientMsgId: `bench-${runId}-${process.pid}-${sendCounter}`,
    text: `benchmark message ${sendCounter} 基准测试消息`,
  };
  return { userId, convId, seq: null, body: JSON.stringify({ query: SEND_MUTATION, variables }) };
}

/** The conversations a send scenario writes to. */
export function sendConversations(scenario: SendScenario): string[] {
  return scenario === 'send-hot' ? [HOT_CONVERSATION_ID] : Array.from({ length: 1000 }, (_, k) => benchConversationId(k + 1));
}

/** A token, signed with `secret`, for each bench user (`user-0` …): every reader and sender of the scenarios. */
export async function benchUserTokens(secret: string): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  for (let i = 0; i < BENCH_DATA.conversations; i++) tokens.set(`user-${i}`, await signToken(secret, `user-${i}`, 3600));
  return tokens;
}
