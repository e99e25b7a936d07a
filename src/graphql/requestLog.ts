/**
 * One structured log line per GraphQL request: operation name, duration,
 * SQL statements, loader batches, the user and the error codes. Never the
 * query's variables, message text or tokens: logs are not where private
 * conversations go.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import type { Logger } from '../log.ts';
import type { RequestContext } from './context.ts';

/** The plugin that writes the line at `info` level. */
export function requestLog(logger: Logger): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart({ contextValue }) {
      const started = performance.now();
      return {
        async willSendResponse({ operationName, errors }) {
          if (!logger.isLevelEnabled('info')) return;
          logger.info(
            {
              operation: operationName ?? null,
              ms: Math.round((performance.now() - started) * 100) / 100,
              statements: contextValue.stats.statements,
              batches: contextValue.stats.batches.length,
              user: contextValue.auth.kind === 'user' ? contextValue.auth.userId : null,
              codes: errors?.map((e) => e.extensions?.code ?? 'INTERNAL_SERVER_ERROR') ?? [],
            },
            'graphql request',
          );
        },
      };
    },
  };
}
