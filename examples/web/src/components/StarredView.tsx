import { useQuery } from '@apollo/client';
import { StarredMessagesQuery } from '../operations';
import { ListedMessage } from './ListedMessage';

/** Your starred messages, most recently starred first; each jumps into its conversation at it. More pages on request. */
export function StarredView() {
  const { data, error, loading, fetchMore } = useQuery(StarredMessagesQuery, { fetchPolicy: 'network-only' });
  if (error) return <p className="error">{error.message}</p>;
  if (!data) return <p className="muted placeholder">{loading ? 'Loading…' : ''}</p>;
  const { edges, pageInfo } = data.viewer.starredMessages;
  return (
    <section className="results" data-testid="starred">
      <h2>Starred</h2>
      {edges.length === 0 && <p className="muted placeholder">Nothing starred. Star a message with ☆ to find it here.</p>}
      <ul>
        {edges.map(({ cursor, node, starredAt }) => (
          <ListedMessage key={cursor} message={node}>
            <span className="muted"> · starred {new Date(starredAt).toLocaleString()}</span>
          </ListedMessage>
        ))}
      </ul>
      {pageInfo.hasNextPage && <button onClick={() => void fetchMore({ variables: { after: pageInfo.endCursor } }).catch(() => {})}>More</button>}
    </section>
  );
}
