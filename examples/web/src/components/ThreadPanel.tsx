import { useMutation, useQuery } from '@apollo/client';
import { useCallback, useEffect, useRef } from 'react';
import { MarkThreadReadMutation, ThreadQuery } from '../operations';
import { Composer } from './Composer';
import { MessageActionsContext, useMessageActions } from './messageActions';
import { MessageItem } from './MessageItem';
import { repliesLabel } from './ThreadSummary';

const PAGE = 20;

/**
 * The side panel of one thread: its root, its replies (the newest page,
 * older ones on request with `before`) and a box that replies in it. It
 * marks the thread read up to the newest reply shown, and fetches what
 * follows its last reply whenever the root's `replyCount` grows (the cache
 * updates it from every reply's `threadRoot`, sent here or arriving live).
 */
export function ThreadPanel({ rootId, viewerId, onClose }: { rootId: string; viewerId?: string; onClose(): void }) {
  const actions = useMessageActions();
  const q = useQuery(ThreadQuery, { variables: { id: rootId, last: PAGE }, fetchPolicy: 'cache-and-network' });
  const { fetchMore, refetch } = q;
  const root = q.data?.message;
  const replies = root?.replies;
  const newest = replies?.edges.at(-1)?.node;

  const [markThreadRead] = useMutation(MarkThreadReadMutation);
  const marked = useRef(0);
  useEffect(() => {
    if (!newest || newest.seq <= marked.current) return;
    marked.current = newest.seq;
    void markThreadRead({ variables: { id: rootId, seq: newest.seq } }).catch(() => {});
  }, [rootId, newest, markThreadRead]);

  const endCursor = replies?.pageInfo.endCursor;
  const fetchNewer = useCallback(
    () => (endCursor ? fetchMore({ variables: { after: endCursor, first: 100, last: null, before: null } }) : refetch()),
    [fetchMore, refetch, endCursor],
  );
  const count = root?.replyCount;
  const seenCount = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (count === undefined) return;
    if (seenCount.current !== undefined && count > seenCount.current) void fetchNewer().catch(() => {});
    seenCount.current = count;
  }, [count, fetchNewer]);

  const startCursor = replies?.pageInfo.startCursor;
  const loadOlder = () => void fetchMore({ variables: { before: startCursor, last: PAGE, first: null, after: null } }).catch(() => {});

  return (
    <aside className="thread" data-testid="thread">
      <header>
        <strong>Thread</strong>
        <button onClick={onClose} aria-label="Close thread">
          ×
        </button>
      </header>
      {q.error && <p className="error">{q.error.message}</p>}
      {!root && !q.error && <p className="muted placeholder">Loading…</p>}
      {root && replies && (
        <MessageActionsContext.Provider value={{ ...actions, reply: undefined, threadRootId: rootId }}>
          <div className="messages">
            <ul>
              <MessageItem message={root} viewerId={viewerId} highlighted={false} />
            </ul>
            <p className="edge muted">
              {replies.pageInfo.hasPreviousPage ? <button onClick={loadOlder}>Older replies</button> : repliesLabel(root.replyCount)}
            </p>
            <ul data-testid="thread-replies">
              {replies.edges.map(({ node }) => (
                <MessageItem key={node.id} message={node} viewerId={viewerId} highlighted={false} />
              ))}
            </ul>
          </div>
          <Composer conversationId={actions.conversationId} memberIds={actions.memberIds} replyToId={rootId} label="Reply in thread" button="Send reply" />
        </MessageActionsContext.Provider>
      )}
    </aside>
  );
}
