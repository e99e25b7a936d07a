/**
 * What clients see of an error: client errors pass through with their code;
 * anything unexpected is logged here and answered with a generic message, so
 * no SQL, stack or internal detail reaches a client.
 */
import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';

const CLIENT_CODES = new Set([
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'QUERY_TOO_COMPLEX',
  'RATE_LIMITED',
]);

/** Makes Apollo's `formatError`, logging unexpected errors with `log`. */
export function createFormatError(log: (error: unknown) => void) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && CLIENT_CODES.has(code)) {
      const { stacktrace: _dropped, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    log(unwrapResolverError(error));
    return {
      message: 'Something went wrong on the server; it has been logged.',
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    };
  };
}
