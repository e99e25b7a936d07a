import type { ReactNode } from 'react';
import type { ListedMessageFieldsFragment } from '../gql/graphql';
import { hrefs } from '../route';
import { conversationName } from './Inbox';
import { quotedText } from './ReplyQuote';

/** One message of the Starred or Mentions list: who, where, when and its text, linking to its permalink in its conversation. */
export function ListedMessage({ message, children }: { message: ListedMessageFieldsFragment; children?: ReactNode }) {
  return (
    <li className="result" data-message-id={message.id}>
      <a href={hrefs.message(message.conversation.id, message.id)}>
        <div className="meta">
          <span className="sender">{message.sender.id}</span> in {conversationName(message.conversation)}{' '}
          <span className="muted">
            #{message.seq} · {new Date(message.createdAt).toLocaleString()}
          </span>
          {children}
        </div>
        <div className="snippet">{quotedText(message.content)}</div>
      </a>
    </li>
  );
}
