import { useMutation } from '@apollo/client';
import type { MessageFieldsFragment } from '../gql/graphql';
import { AddReactionMutation, RemoveReactionMutation } from '../operations';

const PICKER = ['👍', '❤️', '😂', '🎉'];

/**
 * Adds or removes your reaction. Both mutations answer the message's
 * reactions, which replace the cached ones (others' changes arrive the same
 * way, as `REACTIONS_CHANGED` events).
 */
function useReact(messageId: string) {
  const [add, added] = useMutation(AddReactionMutation);
  const [remove, removed] = useMutation(RemoveReactionMutation);
  const react = (reaction: string, on: boolean) => void (on ? add : remove)({ variables: { id: messageId, reaction } }).catch(() => {});
  return { react, error: added.error ?? removed.error };
}

/** A message's reaction groups, yours highlighted; a click adds yours or takes it back. */
export function ReactionGroups({ message }: { message: MessageFieldsFragment }) {
  const { react, error } = useReact(message.id);
  if (message.reactions.length === 0) return null;
  return (
    <span className="reactions">
      {message.reactions.map((group) => (
        <button
          key={group.reaction}
          className={group.reactedByMe ? 'reaction mine' : 'reaction'}
          data-reaction={group.reaction}
          aria-pressed={group.reactedByMe}
          title={group.reactedByMe ? 'Take your reaction back' : 'React with this too'}
          onClick={() => react(group.reaction, !group.reactedByMe)}
        >
          {group.reaction} {group.count}
        </button>
      ))}
      {error && <span className="error">{error.message}</span>}
    </span>
  );
}

/** A few emoji to react with. */
export function ReactionPicker({ messageId }: { messageId: string }) {
  const { react, error } = useReact(messageId);
  return (
    <span className="picker">
      {PICKER.map((reaction) => (
        <button key={reaction} aria-label={`React with ${reaction}`} onClick={() => react(reaction, true)}>
          {reaction}
        </button>
      ))}
      {error && <span className="error">{error.message}</span>}
    </span>
  );
}
