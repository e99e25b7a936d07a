import { type ApolloError, useMutation } from '@apollo/client';
import { PinMessageMutation, UnpinMessageMutation } from '../operations';
import { useMessageActions } from './messageActions';

/** What a refused pin says: who may pin is the server's rule, which the page cannot know in full (admins are a token role). */
function pinProblem(error: ApolloError): { code: string; text: string } {
  const code = String(error.graphQLErrors[0]?.extensions?.code ?? 'ERROR');
  if (code === 'FORBIDDEN') return { code, text: 'Only the owner and admins may pin here.' };
  return { code, text: error.message };
}

/**
 * Pin or Unpin, for everyone in the conversation. Shown on every message,
 * since whether you may pin depends on roles the page does not see; a
 * refusal shows as a small error (its code in `data-code`). The answer
 * carries the conversation's pins, which replace the cached ones.
 */
export function PinToggle({ messageId }: { messageId: string }) {
  const { pinnedIds } = useMessageActions();
  const [pin, pinned] = useMutation(PinMessageMutation);
  const [unpin, unpinned] = useMutation(UnpinMessageMutation);
  const error = pinned.error ?? unpinned.error;
  const problem = error && pinProblem(error);
  const on = pinnedIds.has(messageId);
  return (
    <>
      <button aria-pressed={on} disabled={pinned.loading || unpinned.loading} onClick={() => void (on ? unpin : pin)({ variables: { id: messageId } }).catch(() => {})}>
        {on ? 'Unpin' : 'Pin'}
      </button>
      {problem && (
        <span className="error" data-testid="pin-error" data-code={problem.code}>
          {problem.text}
        </span>
      )}
    </>
  );
}
