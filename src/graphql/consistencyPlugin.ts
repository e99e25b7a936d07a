/**
 * Read replicas inside Apollo Server: a query operation may read from a
 * replica, or from the primary's read pool (every other operation reads and
 * writes the primary's main pool, so a mutation's answer shows what it
 * wrote), and with replicas every response carries the
 * consistency token in the `Backscroll-Consistency` header and in
 * `extensions.consistency`: after a mutation, the primary's WAL position
 * once it has answered; after a query, the position it read at. The routing
 * itself is src/db/requestRoute.ts.
 *
 * It goes by the gate's reading of the operation (gatePlugin.ts), in
 * `executionDidStart`: Apollo runs every plugin's `didResolveOperation`
 * together, so the gate's answer may not be there yet in a sibling's.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { CONSISTENCY_HEADER } from '../history/walPosition.ts';
import type { RequestContext } from './context.ts';

/** The Apollo plugin that lets query operations read from replicas or the read pool, and answers each request's consistency token. */
export function consistencyPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async executionDidStart({ contextValue }) {
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
