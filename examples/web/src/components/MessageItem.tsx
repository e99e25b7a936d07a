import type { MessageFieldsFragment } from '../gql/graphql';

export function MessagePreview({ message }: { message: MessageFieldsFragment }) {
  const { content } = message;
  if (content.__typename === 'TextContent') return <>{`${message.sender.id}: ${content.text}`}</>;
  if (content.__typename === 'RevokedContent') return <em>message revoked</em>;
  return <em>message erased</em>;
}

/** One message; revoked and erased ones are placeholders. */
export function MessageItem({ message, own, highlighted }: { message: MessageFieldsFragment; own: boolean; highlighted: boolean }) {
  const { content } = message;
  const classes = ['message', own ? 'own' : '', highlighted ? 'highlight' : '', content.__typename !== 'TextContent' ? 'placeholder' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <li className={classes} data-seq={message.seq} data-message-id={message.id} id={`m-${message.seq}`}>
      <div className="meta">
        <span className="sender">{message.sender.id}</span> <span className="muted">#{message.seq} · {new Date(message.createdAt).toLocaleTimeString()}</span>
      </div>
      {content.__typename === 'TextContent' && <div className="text">{content.text}</div>}
      {content.__typename === 'RevokedContent' && (
        <div className="text revoked" data-testid="revoked">
          This message was revoked{content.revokedBy.id !== message.sender.id ? ` by ${content.revokedBy.id}` : ''}.
        </div>
      )}
      {content.__typename === 'PurgedContent' && <div className="text revoked">This message was erased.</div>}
    </li>
  );
}
