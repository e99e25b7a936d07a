import { useState } from 'react';
import type { MessageFieldsFragment } from '../gql/graphql';
import { EditedMark, EditForm } from './Edits';
import { MarkUnreadButton } from './MarkUnreadButton';
import { useMessageActions } from './messageActions';
import { PinToggle } from './PinToggle';
import { ReactionGroups, ReactionPicker } from './Reactions';
import { ReplyQuote } from './ReplyQuote';
import { StarToggle } from './StarToggle';
import { ThreadSummary } from './ThreadSummary';

export function MessagePreview({ message }: { message: MessageFieldsFragment }) {
  const { content } = message;
  if (content.__typename === 'TextContent') return <>{`${message.sender.id}: ${content.text}`}</>;
  if (content.__typename === 'RevokedContent') return <em>message revoked</em>;
  return <em>message erased</em>;
}

/** Whether `message` mentions the viewer: by name, or everyone. */
function mentionsViewer(message: MessageFieldsFragment, viewerId: string | undefined): boolean {
  return message.mentionsEveryone || message.mentions.some((user) => user.id === viewerId);
}

/**
 * One message: the quote of what it answers, its text (revoked and erased
 * ones are placeholders), whom it mentions (marked when it mentions you),
 * your star, its pin, its reactions, its thread's summary on a root, and
 * Reply, Pin, Mark unread and (on your own text) Edit.
 */
export function MessageItem({ message, viewerId, highlighted }: { message: MessageFieldsFragment; viewerId?: string; highlighted: boolean }) {
  const { reply, pinnedIds } = useMessageActions();
  const [editing, setEditing] = useState(false);
  const { content } = message;
  const isText = content.__typename === 'TextContent';
  const own = message.sender.id === viewerId;
  const mentioned = !own && mentionsViewer(message, viewerId);
  const classes = ['message', own ? 'own' : '', mentioned ? 'mentioned' : '', highlighted ? 'highlight' : '', isText ? '' : 'placeholder'].filter(Boolean).join(' ');
  const named = [...message.mentions.map((user) => user.id), ...(message.mentionsEveryone ? ['everyone'] : [])];
  return (
    <li className={classes} data-seq={message.seq} data-message-id={message.id} id={`m-${message.seq}`}>
      <div className="meta">
        <span className="sender">{message.sender.id}</span> <span className="muted">#{message.seq} · {new Date(message.createdAt).toLocaleTimeString()}</span>
        {message.editedAt && <EditedMark editedAt={message.editedAt} />}
        {named.length > 0 && (
          <span className="mentions" data-testid="mentions">
            {named.map((name) => `@${name}`).join(' ')}
          </span>
        )}
        {pinnedIds.has(message.id) && (
          <span className="pinned muted" data-testid="pinned">
            📌 pinned
          </span>
        )}
        {isText && <StarToggle message={message} />}
      </div>
      <ReplyQuote message={message} />
      {content.__typename === 'TextContent' &&
        (editing ? <EditForm messageId={message.id} text={content.text} onDone={() => setEditing(false)} /> : <div className="text">{content.text}</div>)}
      {content.__typename === 'RevokedContent' && (
        <div className="text revoked" data-testid="revoked">
          This message was revoked{content.revokedBy.id !== message.sender.id ? ` by ${content.revokedBy.id}` : ''}.
        </div>
      )}
      {content.__typename === 'PurgedContent' && <div className="text revoked">This message was erased.</div>}
      <div className="footer">
        <ReactionGroups message={message} />
        <ThreadSummary message={message} />
        {isText && !editing && (
          <span className="actions">
            <ReactionPicker messageId={message.id} />
            {reply && <button onClick={() => reply(message)}>Reply</button>}
            {own && <button onClick={() => setEditing(true)}>Edit</button>}
            <PinToggle messageId={message.id} />
            <MarkUnreadButton message={message} />
          </span>
        )}
      </div>
    </li>
  );
}
