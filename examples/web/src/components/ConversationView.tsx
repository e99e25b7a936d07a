import { useApolloClient, useMutation, useQuery } from '@apollo/client';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ConversationEventsSubscription as EventData, ConversationPageQuery as ConversationPageData, MessageFieldsFragment, PageInfoFieldsFragment } from '../gql/graphql';
import {
  ConversationAroundQuery,
  ConversationEventsSubscription,
  ConversationPageQuery,
  MarkReadMutation,
  MessagesAfterQuery,
} from '../operations';
import { RECONNECTED } from '../apollo';
import { Composer } from './Composer';
import { conversationName } from './Inbox';
import { type MessageActions, MessageActionsContext } from './messageActions';
import { MessageItem } from './MessageItem';
import { quotedText } from './ReplyQuote';
import { ThreadPanel } from './ThreadPanel';

const PAGE = 30;
const AROUND = 15;

interface Edge {
  __typename: 'MessageEdge';
  cursor: string;
  node: MessageFieldsFragment;
}

interface Props {
  conversationId: string;
  /** A permalink's message: jump to it instead of the newest page. */
  anchorId?: string;
  viewerId?: string;
}

/**
 * A conversation: the newest page or a permalink's, and beside it the open
 * thread, if any. What a message's buttons do (reply in the composer, open
 * a thread) reaches the messages through MessageActionsContext.
 */
export function ConversationView(props: Props) {
  const { conversationId, anchorId, viewerId } = props;
  const [threadId, setThreadId] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<MessageFieldsFragment | null>(null);
  // A permalink has no composer to reply in.
  const actions = useMemo<MessageActions>(
    () => ({ conversationId, openThread: setThreadId, reply: anchorId ? undefined : setReplyTo }),
    [conversationId, anchorId],
  );
  return (
    <MessageActionsContext.Provider value={actions}>
      <div className="conversation-layout">
        {anchorId ? <AroundView {...props} anchorId={anchorId} /> : <NewestView {...props} replyTo={replyTo} onCancelReply={() => setReplyTo(null)} />}
        {threadId && <ThreadPanel key={threadId} rootId={threadId} viewerId={viewerId} onClose={() => setThreadId(null)} />}
      </div>
    </MessageActionsContext.Provider>
  );
}

/** The edge a `MESSAGE_SENT` event adds at the end, or null for any other event or one already shown. */
function sentEdge(edges: readonly Edge[], event: EventData['conversationEvents']): Edge | null {
  if (event.kind !== 'MESSAGE_SENT' || !event.message) return null;
  if (edges.some((e) => e.node.id === event.message!.id)) return null;
  return { __typename: 'MessageEdge', cursor: event.cursor, node: event.message };
}

/**
 * Once per new newest message shown: marks it read (the inbox badge follows
 * from the payload) and makes it the inbox's last message.
 */
function useReadUpTo(conversationId: string, edges: readonly Edge[], atNewest: boolean) {
  const [markRead] = useMutation(MarkReadMutation);
  const { cache } = useApolloClient();
  const marked = useRef(0);
  const newest = edges.at(-1)?.node;
  useEffect(() => {
    if (!newest || newest.seq <= marked.current) return;
    marked.current = newest.seq;
    void markRead({ variables: { id: conversationId, seq: newest.seq } }).catch(() => {});
    if (atNewest) {
      cache.modify({
        id: cache.identify({ __typename: 'Conversation', id: conversationId }),
        fields: { lastMessage: (_value, { toReference }) => toReference({ __typename: 'Message', id: newest.id }) },
      });
    }
  }, [conversationId, newest, atNewest, markRead, cache]);
}

/**
 * The newest page, older pages on scrolling up (merged by relayStylePagination),
 * live messages at the bottom, and the composer (a reply when `replyTo` is set).
 * Edits and reactions, live or our own, need no code here: the subscription's
 * and the mutations' messages are written to the cache, which updates them in place.
 */
function NewestView({ conversationId, viewerId, replyTo, onCancelReply }: Props & { replyTo: MessageFieldsFragment | null; onCancelReply(): void }) {
  const q = useQuery(ConversationPageQuery, { variables: { id: conversationId, last: PAGE }, fetchPolicy: 'cache-and-network' });
  const { subscribeToMore, fetchMore } = q;
  const connection = q.data?.conversation?.messages;
  const edges: readonly Edge[] = connection?.edges ?? [];
  useReadUpTo(conversationId, edges, true);

  const append = useCallback((prev: ConversationPageData, edge: Edge | null): ConversationPageData => {
    const messages = prev.conversation?.messages;
    if (!messages || !edge || messages.edges.some((e) => e.node.id === edge.node.id)) return prev;
    return {
      ...prev,
      conversation: {
        ...prev.conversation!,
        messages: { ...messages, edges: [...messages.edges, edge], pageInfo: { ...messages.pageInfo, endCursor: edge.cursor }, latestSeq: Math.max(messages.latestSeq, edge.node.seq) },
      },
    };
  }, []);

  // subscribeToMore is a new function whenever the query's result changes: read it through a ref,
  // so the view subscribes once per conversation instead of subscribing again after the first page arrives.
  const subscribeRef = useRef(subscribeToMore);
  subscribeRef.current = subscribeToMore;
  useEffect(
    () =>
      subscribeRef.current({
        document: ConversationEventsSubscription,
        variables: { id: conversationId },
        updateQuery: (prev, { subscriptionData }) => append(prev, sentEdge(prev.conversation?.messages.edges ?? [], subscriptionData.data.conversationEvents)),
      }),
    [conversationId, append],
  );

  // After our own send, fetch what follows the page's end (the reconnect contract), in case its live event is late or lost.
  const endCursor = connection?.pageInfo.endCursor;
  const catchUp = useCallback(async () => {
    if (!endCursor) return;
    await fetchMore({
      query: MessagesAfterQuery,
      variables: { id: conversationId, first: 100, after: endCursor },
      updateQuery: (prev, { fetchMoreResult }) => (fetchMoreResult.conversation?.messages.edges ?? []).reduce<ConversationPageData>((data, edge) => append(data, edge), prev),
    });
  }, [fetchMore, conversationId, endCursor, append]);
  useEffect(() => {
    const onReconnect = () => void catchUp();
    window.addEventListener(RECONNECTED, onReconnect);
    return () => window.removeEventListener(RECONNECTED, onReconnect);
  }, [catchUp]);

  const loadOlder = useCallback(async () => {
    const before = connection?.pageInfo.startCursor;
    if (!before) return;
    await fetchMore({ variables: { before } });
  }, [fetchMore, connection?.pageInfo.startCursor]);

  if (q.error) return <p className="error">{q.error.message}</p>;
  if (!q.data?.conversation || !connection) return <p className="muted placeholder">Loading…</p>;
  return (
    <section className="conversation" data-testid="conversation">
      <h2>{conversationName(q.data.conversation, viewerId)}</h2>
      <MessageList edges={edges} pageInfo={connection.pageInfo} viewerId={viewerId} onOlder={loadOlder} />
      <Composer
        conversationId={conversationId}
        replyToId={replyTo?.id}
        label="Message"
        button="Send"
        onSent={() => {
          onCancelReply();
          void catchUp();
        }}
      >
        {replyTo && (
          <div className="replying" data-testid="replying">
            Replying to <span className="sender">{replyTo.sender.id}</span>:{' '}
            <span className="muted">{quotedText(replyTo.content)}</span>
            <button type="button" onClick={onCancelReply} aria-label="Cancel reply">
              ×
            </button>
          </div>
        )}
      </Composer>
    </section>
  );
}

/**
 * A permalink: the page around one message, highlighted, in one request;
 * pages on in both directions with `fetchMore` and a cursor, merged by
 * relayStylePagination like the newest view's pages. Live messages join
 * only once the list reaches the newest message.
 */
function AroundView({ conversationId, anchorId, viewerId }: Props & { anchorId: string }) {
  const q = useQuery(ConversationAroundQuery, {
    variables: { id: conversationId, around: anchorId, last: AROUND, first: AROUND },
    fetchPolicy: 'network-only',
  });
  const { subscribeToMore, fetchMore } = q;
  const connection = q.data?.conversation?.messages;
  const edges: readonly Edge[] = connection?.edges ?? [];
  useReadUpTo(conversationId, edges, connection?.pageInfo.hasNextPage === false);
  // Pages fetched after the jump say nothing about the anchor (null): keep what the jump said.
  const anchorFound = useRef<boolean | null>(null);
  if (connection?.anchorFound != null) anchorFound.current = connection.anchorFound;

  const subscribeRef = useRef(subscribeToMore);
  subscribeRef.current = subscribeToMore;
  useEffect(
    () =>
      subscribeRef.current({
        document: ConversationEventsSubscription,
        variables: { id: conversationId },
        updateQuery: (prev, { subscriptionData }) => {
          const messages = prev.conversation?.messages;
          const edge = messages && !messages.pageInfo.hasNextPage && sentEdge(messages.edges, subscriptionData.data.conversationEvents);
          if (!messages || !edge) return prev;
          return {
            ...prev,
            conversation: { ...prev.conversation!, messages: { ...messages, edges: [...messages.edges, edge], pageInfo: { ...messages.pageInfo, endCursor: edge.cursor } } },
          };
        },
      }),
    // Once per conversation, as in NewestView.
    [conversationId],
  );

  const startCursor = connection?.pageInfo.startCursor;
  const loadOlder = useCallback(async () => {
    if (startCursor) await fetchMore({ variables: { before: startCursor, last: PAGE, first: null } });
  }, [fetchMore, startCursor]);
  const endCursor = connection?.pageInfo.endCursor;
  const loadNewer = useCallback(async () => {
    if (endCursor) await fetchMore({ variables: { after: endCursor, first: PAGE, last: null } });
  }, [fetchMore, endCursor]);

  if (q.error) return <p className="error">{q.error.message}</p>;
  if (!q.data?.conversation || !connection) return <p className="muted placeholder">Jumping…</p>;
  return (
    <section className="conversation" data-testid="conversation">
      <h2>{conversationName(q.data.conversation, viewerId)}</h2>
      {anchorFound.current === false && <p className="muted">That message is no longer visible to you; showing where it was.</p>}
      <MessageList edges={edges} pageInfo={connection.pageInfo} viewerId={viewerId} anchorId={anchorId} onOlder={loadOlder} onNewer={loadNewer} />
    </section>
  );
}

interface ListProps {
  edges: readonly Edge[];
  pageInfo: PageInfoFieldsFragment;
  viewerId?: string;
  anchorId?: string;
  onOlder(): Promise<void>;
  onNewer?(): Promise<void>;
}

/**
 * The scrolling list. Reaching the top loads the older page and keeps the
 * same messages in view; new messages at the bottom scroll into view when
 * the reader is already at the bottom.
 */
function MessageList({ edges, pageInfo, viewerId, anchorId, onOlder, onNewer }: ListProps) {
  const box = useRef<HTMLDivElement>(null);
  const [busy, setBusy] = useState<'older' | 'newer' | null>(null);
  const busyRef = useRef(false);
  const seen = useRef({ first: undefined as string | undefined, last: undefined as string | undefined, height: 0, top: 0, atBottom: true, placed: false });
  const first = edges[0]?.cursor;
  const last = edges.at(-1)?.cursor;

  // The cursor last paged from in each direction: a scroll event handled before the
  // re-render still sees the old cursor, and must not fetch the same page again.
  const requested = useRef({ older: null as string | null, newer: null as string | null });
  const load = useCallback(async (which: 'older' | 'newer') => {
    const run = which === 'older' ? onOlder : onNewer;
    const cursor = which === 'older' ? pageInfo.startCursor : pageInfo.endCursor;
    if (!run || busyRef.current || requested.current[which] === cursor) return;
    busyRef.current = true;
    requested.current[which] = cursor;
    setBusy(which);
    try {
      await run();
    } catch {
      requested.current[which] = null; // let the next scroll try again
    } finally {
      busyRef.current = false;
      setBusy(null);
    }
  }, [onOlder, onNewer, pageInfo.startCursor, pageInfo.endCursor]);

  const check = useCallback(() => {
    const el = box.current;
    if (!el) return;
    const s = seen.current;
    s.top = el.scrollTop;
    s.height = el.scrollHeight;
    s.atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    if (!s.placed) return;
    if (el.scrollTop < 80 && pageInfo.hasPreviousPage) void load('older');
    else if (onNewer && s.atBottom && pageInfo.hasNextPage) void load('newer');
  }, [load, onNewer, pageInfo.hasPreviousPage, pageInfo.hasNextPage]);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el || edges.length === 0) return;
    const s = seen.current;
    if (!s.placed) {
      const anchor = anchorId ? el.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(anchorId)}"]`) : null;
      if (anchor) el.scrollTop = anchor.offsetTop - el.clientHeight / 2 + anchor.clientHeight / 2;
      else el.scrollTop = el.scrollHeight;
      s.placed = true;
    } else if (s.first !== first && s.last === last) {
      // Older messages were put on top: keep what the reader was looking at in place.
      el.scrollTop = s.top + (el.scrollHeight - s.height);
    } else if (s.last !== last && s.first === first && s.atBottom && !pageInfo.hasNextPage) {
      el.scrollTop = el.scrollHeight;
    }
    s.first = first;
    s.last = last;
    check();
  }, [first, last, edges.length, anchorId, pageInfo.hasNextPage, check]);

  return (
    <div className="messages" ref={box} onScroll={check} data-testid="messages">
      <p className="edge muted" data-testid="history-start">
        {pageInfo.hasPreviousPage ? (busy === 'older' ? 'Loading older messages…' : <button onClick={() => void load('older')}>Load older</button>) : 'Beginning of the conversation'}
      </p>
      <ul>
        {edges.map(({ node }) => (
          <MessageItem key={node.id} message={node} own={node.sender.id === viewerId} highlighted={node.id === anchorId} />
        ))}
      </ul>
      {pageInfo.hasNextPage && (
        <p className="edge muted">{busy === 'newer' ? 'Loading newer messages…' : <button onClick={() => void load('newer')}>Load newer</button>}</p>
      )}
    </div>
  );
}
