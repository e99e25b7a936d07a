import type { PinnedFieldsFragment } from '../gql/graphql';
import { hrefs } from '../route';
import { quotedText } from './ReplyQuote';

type Pin = PinnedFieldsFragment['pinnedMessages']['edges'][number];

/**
 * The conversation's pins, most recently pinned first, across the top of the
 * view; each jumps to its message (a permalink, `messages(around:)`).
 * Nothing when there are none.
 */
export function PinnedStrip({ conversationId, pins }: { conversationId: string; pins: readonly Pin[] }) {
  if (pins.length === 0) return null;
  return (
    <div className="pins" data-testid="pins">
      <span className="muted">📌 {pins.length} pinned</span>
      <ul>
        {pins.map(({ node, pinnedBy, pinnedAt }) => (
          <li key={node.id} data-message-id={node.id}>
            <a href={hrefs.message(conversationId, node.id)} title={`Pinned by ${pinnedBy.id}, ${new Date(pinnedAt).toLocaleString()}`}>
              <span className="sender">{node.sender.id}</span> {quotedText(node.content)}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}
