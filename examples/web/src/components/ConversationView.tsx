import { useApolloClient, useMutation, useQuery } from '@apollo/client';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ConversationEventsSubscription as EventData, ConversationPageQuery as ConversationPageData, MessageFieldsFragment } from '../gql/graphql';
import { ConversationDetailsQuery, ConversationEventsSubscription, ConversationPageQuery, MarkReadMutation } from '../operations';
import { RECONNECTED } from '../apollo';
import { Composer } from './Composer';
import { conversationName } from './Inbox';
import { type MessageActions, MessageActionsContext, useMessageActions } from './messageActions';
import { type Edge, MessageList } from './MessageList';
import { PinnedStrip } from './PinnedStrip';
import { quotedText } from './ReplyQuote';
import { ThreadPanel } from './ThreadPanel';

const PAGE = 30;
/** A permalink opens with this many messages on each side of its message. */
const AROUND = 15;
/** Opening at the first unread: a little of what was read above it, more of what is new below. */
const ABOVE_UNREAD = 10;
const BELOW_UNREAD = 20;

interface Props {
  conversationId: string;
  /** A permalink's message: jump to it instead of the first unread. */
  anchorId?: string;
  viewerId?: string;
}

/**
 * A conversation: its pins, its history (opened at your first unread
 * message, or at a permalink's), and beside it the open thread, if any.
 * What a message's buttons do (reply in the composer, open a thread, tell
 * the view where "mark unread" moved the line) and what they need to know
 * (the pins, the members) reach the messages through MessageActionsContext.
 */
export function ConversationView(props: Props) {
  const { conversationId, anchorId, viewerId } = props;
  const [threadId, setThreadId] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<MessageFieldsFragment | null>(null);
  const [markedUnreadSeq, setMarkedUnreadSeq] = useState<number | null>(null);
  const details = useQuery(ConversationDetailsQuery, { variables: { id: conversationId }, fetchPolicy: 'cache-and-network' });
  const members = details.data?.conversation?.members.edges;
  const pins = details.data?.conversation?.pinnedMessages.edges;
  const memberIds = useMemo(() => (members ?? []).map((e) => e.node.user.id), [members]);
  const pinnedIds = useMemo(() => new Set((pins ?? []).map((e) => e.node.id)), [pins]);
  // A permalink has no composer to reply in.
  const actions = useMemo<MessageActions>(
    () => ({ conversationId, memberIds, pinnedIds, openThread: setThreadId, reply: anchorId ? undefined : setReplyTo, markedUnread: setMarkedUnreadSeq }),
    [conversationId, memberIds, pinnedIds, anchorId],
  );
  const { refetch } = details;
  const onPinsChanged = useCallback(() => void refetch().catch(() => {}), [refetch]);
  return (
    <MessageActionsContext.Provider value={actions}>
      <div className="conversation-layout">
        <HistoryView
          {...props}
          banner={<PinnedStrip conversationId={conversationId} pins={pins ?? []} />}
          replyTo={replyTo}
          onCancelReply={() => setReplyTo(null)}
          markedUnreadSeq={markedUnreadSeq}
          onPinsChanged={onPinsChanged}
        />
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

/** `prev` with `edge` at the end, when the list reaches the newest message (otherwise the edge would leave a hole). */
function appendNewest(prev: ConversationPageData, edge: Edge | null): ConversationPageData {
  const messages = prev.conversation?.messages;
  if (!messages || !edge || messages.pageInfo.hasNextPage) return prev;
  return {
    ...prev,
    conversation: {
      ...prev.conversation!,
      messages: { ...messages, edges: [...messages.edges, edge], pageInfo: { ...messages.pageInfo, endCursor: edge.cursor }, latestSeq: Math.max(messages.latestSeq, edge.node.seq) },
    },
  };
}

/**
 * Once per new newest message shown: marks it read (the inbox badges follow
 * from the payload) and, when the list reaches the newest message, makes it
 * the inbox's last message.
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

interface HistoryProps extends Props {
  /** Shown under the title (the pins). */
  banner: ReactNode;
  replyTo: MessageFieldsFragment | null;
  onCancelReply(): void;
  /** Where "mark unread from here" last moved the read position, if it did: the line moves there. */
  markedUnreadSeq: number | null;
  /** A pin or an unpin arrived live. */
  onPinsChanged(): void;
}

/**
 * The history: one request opens it at the first unread message, with the
 * "new messages" line (the newest page when all is read), or at a
 * permalink's message, highlighted. It pages on in both directions with
 * `fetchMore` and a cursor, merged by relayStylePagination; live messages
 * join once the list reaches the newest message. Outside a permalink, the
 * composer (a reply when `replyTo` is set). Edits and reactions, live or
 * our own, need no code here: the subscription's and the mutations'
 * messages are written to the cache, which updates them in place.
 */
function HistoryView({ conversationId, anchorId, viewerId, banner, replyTo, onCancelReply, markedUnreadSeq, onPinsChanged }: HistoryProps) {
  const opening = anchorId ? { around: anchorId, last: AROUND, first: AROUND } : { aroundFirstUnread: true, last: ABOVE_UNREAD, first: BELOW_UNREAD };
  // Where it opens depends on the read position now, so never from the cache.
  const q = useQuery(ConversationPageQuery, { variables: { id: conversationId, ...opening }, fetchPolicy: 'network-only' });
  const { memberIds } = useMessageActions();
  const { subscribeToMore, fetchMore } = q;
  const connection = q.data?.conversation?.messages;
  const edges: readonly Edge[] = connection?.edges ?? [];
  useReadUpTo(conversationId, edges, connection?.pageInfo.hasNextPage === false);
  // Pages fetched after the opening one say nothing of the first unread or the anchor (null): keep what the opening said.
  const opened = useRef<{ firstUnreadSeq: number | null; anchorFound: boolean | null } | null>(null);
  if (connection && !opened.current) opened.current = { firstUnreadSeq: connection.firstUnreadSeq ?? null, anchorFound: connection.anchorFound ?? null };

  // subscribeToMore is a new function whenever the query's result changes: read it (and the
  // pins callback) through a ref, so the view subscribes once per conversation.
  const subscribeRef = useRef(subscribeToMore);
  subscribeRef.current = subscribeToMore;
  const pinsChangedRef = useRef(onPinsChanged);
  pinsChangedRef.current = onPinsChanged;
  useEffect(
    () =>
      subscribeRef.current({
        document: ConversationEventsSubscription,
        variables: { id: conversationId },
        updateQuery: (prev, { subscriptionData }) => {
          const event = subscriptionData.data.conversationEvents;
          // The pins are the details query's: fetch them again, outside this cache update.
          if (event.kind === 'MESSAGE_PINNED' || event.kind === 'MESSAGE_UNPINNED') setTimeout(() => pinsChangedRef.current(), 0);
          return appendNewest(prev, sentEdge(prev.conversation?.messages.edges ?? [], event));
        },
      }),
    [conversationId],
  );

  const startCursor = connection?.pageInfo.startCursor;
  const loadOlder = useCallback(async () => {
    if (startCursor) await fetchMore({ variables: { before: startCursor, last: PAGE, first: null, after: null } });
  }, [fetchMore, startCursor]);
  const endCursor = connection?.pageInfo.endCursor;
  const loadNewer = useCallback(async () => {
    if (endCursor) await fetchMore({ variables: { after: endCursor, first: PAGE, last: null, before: null } });
  }, [fetchMore, endCursor]);
  // After our own send or a reconnect, fetch what follows the list's end (the reconnect contract),
  // in case a live event was late or lost. relayStylePagination merges it after `endCursor`, so
  // a message that also arrived live is not shown twice.
  const catchUp = useCallback(async () => {
    if (endCursor) await fetchMore({ variables: { after: endCursor, first: 100, last: null, before: null } });
  }, [fetchMore, endCursor]);
  useEffect(() => {
    const onReconnect = () => void catchUp().catch(() => {});
    window.addEventListener(RECONNECTED, onReconnect);
    return () => window.removeEventListener(RECONNECTED, onReconnect);
  }, [catchUp]);

  if (q.error) return <p className="error">{q.error.message}</p>;
  if (!q.data?.conversation || !connection || !opened.current) return <p className="muted placeholder">{anchorId ? 'Jumping…' : 'Loading…'}</p>;
  return (
    <section className="conversation" data-testid="conversation">
      <h2>{conversationName(q.data.conversation, viewerId)}</h2>
      {banner}
      {opened.current.anchorFound === false && <p className="muted">That message is no longer visible to you; showing where it was.</p>}
      <MessageList
        edges={edges}
        pageInfo={connection.pageInfo}
        viewerId={viewerId}
        anchorId={anchorId}
        unreadFromSeq={markedUnreadSeq ?? opened.current.firstUnreadSeq}
        onOlder={loadOlder}
        onNewer={loadNewer}
      />
      {!anchorId && (
        <Composer
          conversationId={conversationId}
          memberIds={memberIds}
          replyToId={replyTo?.id}
          label="Message"
          button="Send"
          onSent={() => {
            onCancelReply();
            void catchUp().catch(() => {});
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
      )}
    </section>
  );
}
