/**
 * Read replicas inside Apollo Server: a query operation may read from a
 * replica (every other operation reads and writes the primary, so a
 * mutation's answer shows what it wrote), and every response carries the
 * consistency token in the `Backscroll-Consistency` header and in
 * `extensions.consistency`. The routing itself is src/db/requestRoute.ts.
 *
 * It runs after the gate (gatePlugin.ts), whose reading of the operation it
 * trusts, and before any resolver sends a statement.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { CONSISTENCY_HEADER } from '../history/walPosition.ts';
import type { RequestContext } from './context.ts';

/** The Apollo plugin that routes query operations to replicas and answers each request's token. */
export function consistencyPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue }) {
          if (contextValue.gate?.operation.operation === 'query') contextValue.route.readOnly();
        },
        async willSendResponse({ contextValue, response }) {
          const token = await contextValue.route.token(contextValue.gate?.operation.operation === 'mutation');
          if (token === null) return;
          response.http.headers.set(CONSISTENCY_HEADER, token);
          if (response.body.kind === 'single') {
            response.body.singleResult.extensions = { ...response.body.singleResult.extensions, consistency: token };
          }
        },
      };
    },
  };
}
