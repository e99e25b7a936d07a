import type { ApolloError } from '@apollo/client';
import type { InboxQuery as InboxData } from '../gql/graphql';
import { hrefs } from '../route';
import { MessagePreview } from './MessageItem';

type Conversation = InboxData['viewer']['conversations']['edges'][number]['node'];

/** A direct conversation is named after the other user; a group by its title. */
export function conversationName(c: Pick<Conversation, 'kind' | 'title'> & Partial<Pick<Conversation, 'members'>>, viewerId?: string): string {
  if (c.title) return c.title;
  const others = (c.members?.edges ?? []).map((e) => e.node.user.id).filter((id) => id !== viewerId);
  return c.kind === 'DIRECT' ? (others[0] ?? 'Notes to self') : others.join(', ') || 'Untitled group';
}

/** Your conversations, with their unread counts and, beside them, how many of the unread mention you ("@3"). */
export function Inbox({ data, error, loading, selectedId }: { data?: InboxData; error?: ApolloError; loading: boolean; selectedId?: string }) {
  if (error) return <p className="error">Inbox: {error.message}</p>;
  if (!data) return <p className="muted">{loading ? 'Loading…' : ''}</p>;
  const viewerId = data.viewer.id;
  return (
    <ul className="inbox" data-testid="inbox">
      {data.viewer.conversations.edges.map(({ node: c }) => (
        <li key={c.id} className={c.id === selectedId ? 'selected' : undefined} data-conversation-id={c.id}>
          <a href={hrefs.conversation(c.id)}>
            <span className="name">{conversationName(c, viewerId)}</span>
            <span className="badges">
              {c.unreadMentionCount > 0 && (
                <span className="badge mention" data-testid="mention-count" title="Unread messages that mention you">
                  @{c.unreadMentionCount}
                </span>
              )}
              {c.unreadCount > 0 && (
                <span className="badge" data-testid="unread">
                  {c.unreadCount}
                  {c.unreadCountCapped ? '+' : ''}
                </span>
              )}
            </span>
            <span className="preview">{c.lastMessage ? <MessagePreview message={c.lastMessage} /> : 'No messages yet'}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}
