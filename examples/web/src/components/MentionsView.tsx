import { useQuery } from '@apollo/client';
import { MentionsQuery } from '../operations';
import { ListedMessage } from './ListedMessage';

/** The messages that mention you (by name or everyone), newest first; each jumps into its conversation at it. More pages on request. */
export function MentionsView() {
  const { data, error, loading, fetchMore } = useQuery(MentionsQuery, { fetchPolicy: 'network-only' });
  if (error) return <p className="error">{error.message}</p>;
  if (!data) return <p className="muted placeholder">{loading ? 'Loading…' : ''}</p>;
  const { edges, pageInfo } = data.viewer.mentions;
  return (
    <section className="results" data-testid="mention-list">
      <h2>Mentions</h2>
      {edges.length === 0 && <p className="muted placeholder">No one has mentioned you yet.</p>}
      <ul>
        {edges.map(({ cursor, node, everyone }) => (
          <ListedMessage key={cursor} message={node}>
            {everyone && <span className="tag"> @everyone</span>}
          </ListedMessage>
        ))}
      </ul>
      {pageInfo.hasNextPage && <button onClick={() => void fetchMore({ variables: { after: pageInfo.endCursor } }).catch(() => {})}>More</button>}
    </section>
  );
}
