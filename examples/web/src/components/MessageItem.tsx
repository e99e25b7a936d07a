import { useState } from 'react';
import type { MessageFieldsFragment } from '../gql/graphql';
import { EditedMark, EditForm } from './Edits';
import { useMessageActions } from './messageActions';
import { ReactionGroups, ReactionPicker } from './Reactions';
import { ReplyQuote } from './ReplyQuote';
import { ThreadSummary } from './ThreadSummary';

export function MessagePreview({ message }: { message: MessageFieldsFragment }) {
  const { content } = message;
  if (content.__typename === 'TextContent') return <>{`${message.sender.id}: ${content.text}`}</>;
  if (content.__typename === 'RevokedContent') return <em>message revoked</em>;
  return <em>message erased</em>;
}

/**
 * One message: the quote of what it answers, its text (revoked and erased
 * ones are placeholders), its reactions, its thread's summary on a root,
 * and Reply and (on your own text) Edit.
 */
export function MessageItem({ message, own, highlighted }: { message: MessageFieldsFragment; own: boolean; highlighted: boolean }) {
  const { reply } = useMessageActions();
  const [editing, setEditing] = useState(false);
  const { content } = message;
  const isText = content.__typename === 'TextContent';
  const classes = ['message', own ? 'own' : '', highlighted ? 'highlight' : '', isText ? '' : 'placeholder'].filter(Boolean).join(' ');
  return (
    <li className={classes} data-seq={message.seq} data-message-id={message.id} id={`m-${message.seq}`}>
      <div className="meta">
        <span className="sender">{message.sender.id}</span> <span className="muted">#{message.seq} · {new Date(message.createdAt).toLocaleTimeString()}</span>
        {message.editedAt && <EditedMark editedAt={message.editedAt} />}
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
          </span>
        )}
      </div>
    </li>
  );
}
