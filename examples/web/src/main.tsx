import { ApolloProvider } from '@apollo/client';
import { StrictMode, useMemo } from 'react';
import { createRoot } from 'react-dom/client';
import { makeApolloClient } from './apollo';
import { App } from './App';
import { ConnectForm } from './components/ConnectForm';

/** `?server=<graphql url>&token=<jwt>` from the page URL; without a token, the connect form. */
function Root() {
  const params = new URLSearchParams(window.location.search);
  const server = params.get('server') ?? 'http://localhost:4000/graphql';
  const token = params.get('token');
  const client = useMemo(() => (token ? makeApolloClient(server, token) : null), [server, token]);
  if (!client) return <ConnectForm server={server} />;
  return (
    <ApolloProvider client={client}>
      <App server={server} />
    </ApolloProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
