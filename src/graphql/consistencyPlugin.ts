/**
 * Read replicas inside Apollo Server: every response carries the
 * consistency token in the `Backscroll-Consistency` header and in
 * `extensions.consistency`: after a mutation, the primary's WAL position
 * once it has answered; after a query, the position it read at. Which copy
 * a request reads is decided by its route (src/db/requestRoute.ts, made in
 * context.ts), going by the gate's reading of the operation.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { CONSISTENCY_HEADER } from '../history/walPosition.ts';
import type { RequestContext } from './context.ts';

/** The Apollo plugin that answers each request's consistency token. */
export function consistencyPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
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
