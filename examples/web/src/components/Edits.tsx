import { useMutation } from '@apollo/client';
import { useState } from 'react';
import { EditMessageMutation } from '../operations';

/** "edited", with the time of the last edit as its title. */
export function EditedMark({ editedAt }: { editedAt: string }) {
  return (
    <span className="edited muted" data-testid="edited" title={`edited ${new Date(editedAt).toLocaleString()}`}>
      edited
    </span>
  );
}

/**
 * Edits one of your messages in place. The answer carries the message with
 * its new text and `editedAt`, which the cache puts wherever it is shown.
 */
export function EditForm({ messageId, text, onDone }: { messageId: string; text: string; onDone(): void }) {
  const [draft, setDraft] = useState(text);
  const [editMessage, { loading, error }] = useMutation(EditMessageMutation);
  return (
    <form
      className="edit"
      onSubmit={(e) => {
        e.preventDefault();
        if (!draft.trim() || draft === text) return onDone();
        void editMessage({ variables: { id: messageId, text: draft } }).then(onDone, () => {});
      }}
    >
      <input
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onDone()}
        aria-label="Edit message"
        disabled={loading}
        autoFocus
      />
      <button type="submit" disabled={loading}>
        Save
      </button>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
      {error && <span className="error">{error.message}</span>}
    </form>
  );
}
