/**
 * A real client: Apollo Client 3 with the stock `relayStylePagination()`
 * field policy and no merge code of ours. It walks a conversation to its
 * start, jumps to a message and pages on from it both ways, and follows a
 * live message; after each, the list Apollo's cache merged must equal the
 * history the server answers when read page by page on its own.
 *
 * The one piece of configuration is the policy's key: the jump view keeps
 * its own list per anchor (`relayStylePagination(['around'])`), so it
 * neither mixes with the conversation's newest-first list nor with an
 * earlier jump. A jump is one request, `messages(around:)`; paging on from
 * it is `fetchMore` with a cursor, which takes precedence over `around`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApolloClient, gql, HttpLink, InMemoryCache, type NormalizedCacheObject, split } from '@apollo/client/core/index.js';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions/index.js';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities/index.js';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { webSocketUrl } from '../helpers/liveClient.ts';
import { createGroup, DELETE_FOR_ME, MESSAGES, REVOKE, send } from '../helpers/operations.ts';

const PAGE = `
  edges { cursor node { id seq sender { id } content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt } } } }
  pageInfo { hasPreviousPage hasNextPage startCursor endCursor }`;

/** The conversation's own list: newest page first, then older and newer pages. */
const TIMELINE = gql`query Timeline($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) { id messages(first: $first, after: $after, last: $last, before: $before) { ${PAGE} } }
}`;

/** The jump view: the page around `$anchor`, then pages on from it like the timeline's, merged under the key `around`. */
const JUMP_VIEW = gql`query JumpView($id: ID!, $anchor: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) {
    id
    messages(around: $anchor, first: $first, after: $after, last: $last, before: $before) { anchorFound ${PAGE} }
  }
}`;

const EVENTS = gql`subscription Events($id: ID!) { conversationEvents(conversationId: $id) { kind seq cursor } }`;

/** An edge reduced to what the comparison needs, from the cache or from the server. */
type Flat = { cursor: string; id: string; seq: number; sender: string; content: string; text: string | null };
const flatten = (edges: any[]): Flat[] =>
  edges.map((e) => ({
    cursor: e.cursor,
    id: e.node.id,
    seq: e.node.seq,
    sender: e.node.sender.id,
    content: e.node.content.__typename,
    text: e.node.content.text ?? null,
  }));

/** Old enough pages to be several, with hides and revokes for the walker among them. */
const SEEDED = 320;
const HIDDEN_FOR_ALICE = [1, 2, 49, 50, 51, 100, 149, 150, 151, 152, 200, 260, 319];
const REVOKED = [3, 48, 99, 101, 180, 320];

describe.each(backends)('Apollo Client with relayStylePagination (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let conv: { id: string; uuid: string };
  let apollo: ApolloClient<NormalizedCacheObject>;
  let disposeSocket: () => Promise<void>;
  let requestCount = 0;

  /** The whole history as alice sees it, read page by page with plain requests (not Apollo). */
  const serverHistory = async (): Promise<Flat[]> => {
    const edges: any[] = [];
    let after: string | undefined;
    for (;;) {
      const response = await alice.gql(MESSAGES, { id: conv.id, first: 100, after });
      expect(response.errors).toBeUndefined();
      const page = response.data.conversation.messages;
      edges.push(...page.edges);
      if (!page.pageInfo.hasNextPage) return flatten(edges);
      after = page.pageInfo.endCursor;
    }
  };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    conv = await createGroup(alice, ['bob']);
    await seedMessages(harness, conv.uuid, 'bob', SEEDED);
    const ids = (seqs: number[]) => seqs.map((seq) => messageGlobalId(conv.uuid, seq));
    expect((await alice.gql(DELETE_FOR_ME, { messageIds: ids(HIDDEN_FOR_ALICE) })).errors).toBeUndefined();
    // alice owns the group, so she may revoke anyone's message.
    for (const messageId of ids(REVOKED)) expect((await alice.gql(REVOKE, { messageId })).errors).toBeUndefined();

    const socket = createClient({
      url: webSocketUrl(harness.server.url),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${alice.token}` },
      lazy: true,
      retryAttempts: 0,
    });
    disposeSocket = () => socket.dispose() as Promise<void>;
    // Counts HTTP requests, so a jump can be shown to take one.
    const countingFetch: typeof fetch = (input, init) => {
      requestCount += 1;
      return fetch(input, init);
    };
    const http = new HttpLink({ uri: harness.server.url, fetch: countingFetch, headers: { authorization: `Bearer ${alice.token}` } });
    const isSubscription = ({ query }: { query: Parameters<typeof getMainDefinition>[0] }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    };
    apollo = new ApolloClient({
      link: split(isSubscription, new GraphQLWsLink(socket), http),
      cache: new InMemoryCache({ typePolicies: { Conversation: { fields: { messages: relayStylePagination(['around']) } } } }),
    });
  });

  afterAll(async () => {
    apollo?.stop();
    await disposeSocket?.();
    await harness?.close();
  });

  it('walks backward from the newest page to the first message, and the merged list is the history exactly', async () => {
    const timeline = apollo.watchQuery({ query: TIMELINE, variables: { id: conv.id, last: 50 } });
    const watching = timeline.subscribe(() => {});
    let { data } = await timeline.result();
    let requests = 1;
    while (data.conversation.messages.pageInfo.hasPreviousPage) {
      await timeline.fetchMore({ variables: { last: 50, before: data.conversation.messages.pageInfo.startCursor } });
      ({ data } = timeline.getCurrentResult());
      requests++;
    }
    watching.unsubscribe();
    const history = await serverHistory();
    const merged = data.conversation.messages;
    expect(flatten(merged.edges)).toEqual(history);
    expect(merged.pageInfo).toEqual({
      __typename: 'PageInfo',
      hasPreviousPage: false,
      hasNextPage: false,
      startCursor: history[0]!.cursor,
      endCursor: history.at(-1)!.cursor,
    });
    // Exact flags: no empty request at the end. 307 visible messages in pages of 50.
    expect([history.length, requests]).toEqual([SEEDED - HIDDEN_FOR_ALICE.length, 7]);
  });

  /** Jumps to `anchorSeq` (10 messages a side) in one request; `backward`/`forward` page on 30 at a time. */
  const jump = async (anchorSeq: number) => {
    const anchor = messageGlobalId(conv.uuid, anchorSeq);
    const before = requestCount;
    const view = apollo.watchQuery({ query: JUMP_VIEW, variables: { id: conv.id, anchor, last: 10, first: 10 } });
    // Watched, as a view would be, so its current result follows the cache (apollo.stop() ends it).
    view.subscribe(() => {});
    const { data } = await view.result();
    const current = () => view.getCurrentResult().data.conversation;
    // The jump's own variables stay; a cursor and the side's size say where to go.
    const backward = () => view.fetchMore({ variables: { last: 30, before: current().messages.pageInfo.startCursor, first: null } });
    const forward = () => view.fetchMore({ variables: { first: 30, after: current().messages.pageInfo.endCursor, last: null } });
    return { current, backward, forward, anchorFound: data.conversation.messages.anchorFound as boolean, requests: requestCount - before };
  };

  it('jumps to a message in one request, continues both ways, and every step is a contiguous stretch of the history', async () => {
    const history = await serverHistory();
    const view = await jump(160);
    expect([view.anchorFound, view.requests]).toEqual([true, 1]);
    const at = history.findIndex((edge) => edge.seq === 160);
    expect(flatten(view.current().messages.edges)).toEqual(history.slice(at - 10, at + 11));

    await view.backward();
    await view.forward();
    const { messages } = view.current();
    const first = history.findIndex((edge) => edge.cursor === messages.edges[0].cursor);
    expect(flatten(messages.edges)).toEqual(history.slice(first, first + 81));
    expect([first, messages.pageInfo.hasPreviousPage, messages.pageInfo.hasNextPage]).toEqual([at - 40, true, true]);

    while (view.current().messages.pageInfo.hasPreviousPage) await view.backward();
    while (view.current().messages.pageInfo.hasNextPage) await view.forward();
    expect(flatten(view.current().messages.edges)).toEqual(history);
    // The conversation's own list is untouched by the jump view.
    expect(flatten(apollo.readQuery({ query: TIMELINE, variables: { id: conv.id } })!.conversation.messages.edges)).toEqual(history);
  });

  it('jumps to a message hidden from the reader into a fresh list of its own, centred where the message was', async () => {
    const history = await serverHistory();
    const view = await jump(150);
    expect([view.anchorFound, view.requests]).toEqual([false, 1]);
    const next = history.findIndex((edge) => edge.seq > 150);
    expect(flatten(view.current().messages.edges)).toEqual(history.slice(next - 10, next + 10));
    while (view.current().messages.pageInfo.hasPreviousPage) await view.backward();
    while (view.current().messages.pageInfo.hasNextPage) await view.forward();
    expect(flatten(view.current().messages.edges)).toEqual(history);
  });

  it('follows a live message: on MESSAGE_SENT it fetches after its endCursor and the list is the history again', async () => {
    const timeline = apollo.watchQuery({ query: TIMELINE, variables: { id: conv.id, last: 50 } });
    // Watched, as a view would: an unwatched query's current result is not kept up to date with the cache.
    const watching = timeline.subscribe(() => {});
    await timeline.result();
    const events: { kind: string; seq: number; cursor: string }[] = [];
    const catchUp = async () => {
      for (;;) {
        const { pageInfo } = timeline.getCurrentResult().data.conversation.messages;
        const { data } = await timeline.fetchMore({ variables: { first: 50, after: pageInfo.endCursor, last: undefined, before: undefined } });
        if (!data.conversation.messages.pageInfo.hasNextPage) return;
      }
    };
    let caughtUp: Promise<void> = Promise.resolve();
    const subscription = apollo.subscribe({ query: EVENTS, variables: { id: conv.id } }).subscribe({
      next: ({ data }) => {
        events.push(data.conversationEvents);
        if (data.conversationEvents.kind === 'MESSAGE_SENT') caughtUp = caughtUp.then(catchUp);
      },
    });
    try {
      // graphql-ws has no "subscribed" acknowledgement: bob writes once the server counts the subscription.
      await expect.poll(() => harness.openSubscriptions(), { timeout: 10_000 }).toBe(1);
      const last = await send(bob, conv.id, 'the live one');
      await vi.waitFor(() => expect(events.map((event) => event.seq)).toContain(last.seq), { timeout: 10_000 });
      // Events that arrive while catching up chain more catch-ups; wait for the chain to settle.
      for (let settled = null as Promise<void> | null; settled !== caughtUp; ) await (settled = caughtUp);
      const history = await serverHistory();
      const merged = timeline.getCurrentResult().data.conversation.messages;
      expect(flatten(merged.edges)).toEqual(history);
      expect(history.at(-1)).toMatchObject({ seq: last.seq, sender: 'bob', text: 'the live one' });
      // The event's cursor names the same position as the message's edge cursor.
      expect(events.find((event) => event.seq === last.seq)!.cursor).toBe(history.at(-1)!.cursor);
      expect([merged.pageInfo.hasPreviousPage, merged.pageInfo.hasNextPage, merged.pageInfo.endCursor]).toEqual([false, false, history.at(-1)!.cursor]);
    } finally {
      subscription.unsubscribe();
      watching.unsubscribe();
    }
  });
});
