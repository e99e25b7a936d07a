import { useQuery } from '@apollo/client';
import { ConversationView } from './components/ConversationView';
import { Inbox } from './components/Inbox';
import { MentionsView } from './components/MentionsView';
import { SearchBox, SearchResults } from './components/Search';
import { StarredView } from './components/StarredView';
import { InboxQuery } from './operations';
import { hrefs, useRoute } from './route';

export function App({ server }: { server: string }) {
  const route = useRoute();
  // No inbox subscription exists: poll for other conversations' news; the open one updates live.
  const inbox = useQuery(InboxQuery, { fetchPolicy: 'cache-and-network', pollInterval: 15_000 });
  const viewerId = inbox.data?.viewer.id;
  const selected = route.kind === 'conversation' || route.kind === 'message' ? route.conversationId : undefined;
  return (
    <div className="app">
      <aside className="sidebar">
        <header>
          <strong>backscroll</strong>
          <span className="muted" title={server}>
            {viewerId ? ` as ${viewerId}` : ''}
          </span>
        </header>
        <SearchBox initial={route.kind === 'search' ? route.query : ''} />
        <nav className="views">
          <a href={hrefs.mentions} className={route.kind === 'mentions' ? 'selected' : undefined}>
            @ Mentions
          </a>
          <a href={hrefs.starred} className={route.kind === 'starred' ? 'selected' : undefined}>
            ★ Starred
          </a>
        </nav>
        <Inbox data={inbox.data} error={inbox.error} loading={inbox.loading} selectedId={selected} />
      </aside>
      <main className="main">
        {route.kind === 'home' && <p className="muted placeholder">Pick a conversation.</p>}
        {route.kind === 'search' && <SearchResults query={route.query} />}
        {route.kind === 'starred' && <StarredView />}
        {route.kind === 'mentions' && <MentionsView />}
        {route.kind === 'conversation' && <ConversationView key={route.conversationId} conversationId={route.conversationId} viewerId={viewerId} />}
        {route.kind === 'message' && (
          <ConversationView
            key={`${route.conversationId}/${route.messageId}`}
            conversationId={route.conversationId}
            anchorId={route.messageId}
            viewerId={viewerId}
          />
        )}
      </main>
    </div>
  );
}
