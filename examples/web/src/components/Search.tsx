import { useQuery } from '@apollo/client';
import { useEffect, useState } from 'react';
import { SearchQuery } from '../operations';
import { hrefs } from '../route';
import { conversationName } from './Inbox';

export function SearchBox({ initial }: { initial: string }) {
  const [text, setText] = useState(initial);
  useEffect(() => setText(initial), [initial]);
  return (
    <form
      className="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) window.location.hash = hrefs.search(text.trim());
      }}
    >
      <input type="search" placeholder="Search messages" value={text} onChange={(e) => setText(e.target.value)} aria-label="Search messages" />
    </form>
  );
}

/** `text` with each highlight range in a <mark>. */
function Highlighted({ text, highlights }: { text: string; highlights: readonly { start: number; end: number }[] }) {
  const parts: React.ReactNode[] = [];
  let at = 0;
  highlights.forEach(({ start, end }, i) => {
    if (start > at) parts.push(text.slice(at, start));
    parts.push(<mark key={i}>{text.slice(start, end)}</mark>);
    at = end;
  });
  if (at < text.length) parts.push(text.slice(at));
  return <>{parts}</>;
}

export function SearchResults({ query }: { query: string }) {
  const { data, error, loading, fetchMore } = useQuery(SearchQuery, { variables: { query }, fetchPolicy: 'network-only' });
  if (error) return <p className="error">{error.message}</p>;
  if (!data) return <p className="muted placeholder">{loading ? 'Searching…' : ''}</p>;
  const { edges, pageInfo } = data.search;
  return (
    <section className="results" data-testid="search-results">
      <h2>
        Search: <q>{query}</q>
      </h2>
      {edges.length === 0 && <p className="muted">Nothing found.</p>}
      <ul>
        {edges.map(({ cursor, node, snippet }) => (
          <li key={cursor} className="result">
            <a href={hrefs.message(node.conversation.id, node.id)}>
              <div className="meta">
                <span className="sender">{node.sender.id}</span> in {conversationName(node.conversation)} <span className="muted">#{node.seq} · {new Date(node.createdAt).toLocaleString()}</span>
              </div>
              <div className="snippet">
                <Highlighted text={snippet.text} highlights={snippet.highlights} />
              </div>
            </a>
          </li>
        ))}
      </ul>
      {pageInfo.hasNextPage && (
        <button
          onClick={() =>
            void fetchMore({
              variables: { after: pageInfo.endCursor },
              updateQuery: (prev, { fetchMoreResult }) => ({ ...prev, search: { ...fetchMoreResult.search, edges: [...prev.search.edges, ...fetchMoreResult.search.edges] } }),
            })
          }
        >
          More results
        </button>
      )}
    </section>
  );
}
