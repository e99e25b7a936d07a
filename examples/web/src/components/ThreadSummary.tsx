import type { MessageFieldsFragment } from '../gql/graphql';
import { useMessageActions } from './messageActions';

export const repliesLabel = (count: number) => (count === 1 ? '1 reply' : `${count} replies`);

/** On a thread's root: "N replies" (and how many are unread), opening the thread panel. */
export function ThreadSummary({ message }: { message: MessageFieldsFragment }) {
  const { openThread, threadRootId } = useMessageActions();
  if (message.replyCount === 0 || message.id === threadRootId) return null;
  return (
    <button className="thread-link" data-testid="thread-link" onClick={() => openThread(message.id)}>
      {repliesLabel(message.replyCount)}
      {message.threadUnreadCount > 0 && <span className="badge">{message.threadUnreadCount} unread</span>}
    </button>
  );
}
