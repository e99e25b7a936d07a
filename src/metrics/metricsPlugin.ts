/** The Apollo plugin that feeds a server's metrics: one observation per GraphQL request, and its error codes. */
import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestContext } from '../graphql/context.ts';
import type { ServerMetrics } from './serverMetrics.ts';

/** Records each request's duration and statements under its operation name, and counts its errors by code. */
export function metricsPlugin(metrics: ServerMetrics): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart({ contextValue }) {
      const started = performance.now();
      return {
        async willSendResponse({ operationName, errors }) {
          // operationName is the operation Apollo resolved in the document, never a
          // name the client sent that matched nothing, so labels stay names that ran.
          metrics.observeRequest(operationName, (performance.now() - started) / 1000, contextValue.stats.statements);
          for (const error of errors ?? []) metrics.countError(String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR'));
        },
      };
    },
  };
}
