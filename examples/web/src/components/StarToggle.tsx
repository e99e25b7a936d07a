import { useMutation } from '@apollo/client';
import type { MessageFieldsFragment } from '../gql/graphql';
import { StarMessageMutation, UnstarMessageMutation } from '../operations';

/**
 * ☆ or ★: your private star on a message (`starredByMe`). Both mutations
 * answer the message's `starredByMe`, which the cache puts wherever it is
 * shown; the Starred view lists what you starred.
 */
export function StarToggle({ message }: { message: Pick<MessageFieldsFragment, 'id' | 'starredByMe'> }) {
  const [star, starred] = useMutation(StarMessageMutation);
  const [unstar, unstarred] = useMutation(UnstarMessageMutation);
  const error = starred.error ?? unstarred.error;
  const on = message.starredByMe;
  return (
    <>
      <button
        className={on ? 'star on' : 'star'}
        aria-label={on ? 'Unstar' : 'Star'}
        aria-pressed={on}
        title={on ? 'Take your star off' : 'Star it: it is listed under Starred'}
        disabled={starred.loading || unstarred.loading}
        onClick={() => void (on ? unstar : star)({ variables: { id: message.id } }).catch(() => {})}
      >
        {on ? '★' : '☆'}
      </button>
      {error && <span className="error">{error.message}</span>}
    </>
  );
}
