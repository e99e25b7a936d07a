import { useMutation } from '@apollo/client';
import type { MessageFieldsFragment } from '../gql/graphql';
import { MarkUnreadMutation } from '../operations';
import { useMessageActions } from './messageActions';

/**
 * "Mark unread from here": moves your read position to just below the
 * message (`markUnread`, the one way back). The answer's counts update the
 * inbox; the view moves its "new messages" line to the message.
 */
export function MarkUnreadButton({ message }: { message: Pick<MessageFieldsFragment, 'id' | 'seq'> }) {
  const { markedUnread } = useMessageActions();
  const [markUnread, { loading, error }] = useMutation(MarkUnreadMutation);
  return (
    <>
      <button
        title="Mark unread from here"
        disabled={loading}
        onClick={() => void markUnread({ variables: { id: message.id } }).then(() => markedUnread(message.seq), () => {})}
      >
        Mark unread
      </button>
      {error && <span className="error">{error.message}</span>}
    </>
  );
}
