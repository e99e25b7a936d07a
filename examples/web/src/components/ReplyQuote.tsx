import type { MessageFieldsFragment } from '../gql/graphql';
import { hrefs } from '../route';
import { useMessageActions } from './messageActions';

/** What a quote shows of an original's content. */
export function quotedText(content: MessageFieldsFragment['content']): string {
  if (content.__typename === 'TextContent') return content.text;
  return content.__typename === 'RevokedContent' ? 'revoked' : 'erased';
}

/**
 * The quoted line above a reply: its original as the reader sees it now (a
 * link to its permalink), "revoked", or "original unavailable" when the
 * reader cannot see it. Nothing on a message that is not a reply.
 */
export function ReplyQuote({ message }: { message: MessageFieldsFragment }) {
  const { conversationId, threadRootId } = useMessageActions();
  if (message.replyToUnavailable) {
    return (
      <div className="quote unavailable" data-testid="quote">
        original unavailable
      </div>
    );
  }
  const original = message.replyTo;
  if (!original || original.id === threadRootId) return null;
  return (
    <a className={`quote ${original.content.__typename === 'TextContent' ? '' : 'gone'}`} data-testid="quote" href={hrefs.message(conversationId, original.id)}>
      <span className="sender">{original.sender.id}</span> {quotedText(original.content)}
    </a>
  );
}
