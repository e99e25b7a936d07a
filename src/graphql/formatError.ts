/**
 * What clients see of an error: client errors pass through with their code;
 * anything unexpected is logged here and answered with a generic message, so
 * no SQL, stack or internal detail reaches a client.
 */
import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { DatabaseTimeoutError, DatabaseUnavailableError } from '../db/errors.ts';

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
  // Trusted documents (trustedDocuments.ts).
  'PERSISTED_QUERY_NOT_IN_LIST',
  'QUERY_NOT_IN_SAFELIST',
  'QUERY_TOO_COMPLEX',
  'RATE_LIMITED',
  // Archived messages that could not be read (errors.ts archiveUnavailable).
  'ARCHIVE_UNAVAILABLE',
]);

/**
 * The error a resolver threw, under every wrapper: Apollo wraps graphql-jit's
 * error objects, which wrap the resolver's error in turn.
 */
function rootCause(error: unknown): unknown {
  let cause = unwrapResolverError(error);
  for (let depth = 0; depth < 5; depth++) {
    const inner = typeof cause === 'object' && cause !== null ? (cause as { originalError?: unknown }).originalError : undefined;
    if (inner === undefined || inner === null) break;
    cause = inner;
  }
  return cause;
}

/** The client's view of a database failure that is not our bug, or null. */
function databaseFailure(error: unknown): { code: string; message: string } | null {
  if (error instanceof DatabaseTimeoutError) {
    return { code: 'TIMEOUT', message: 'The database took too long to answer this request; try again or ask for less.' };
  }
  if (error instanceof DatabaseUnavailableError) {
    return { code: 'SERVICE_UNAVAILABLE', message: 'The database cannot be reached right now; try again shortly.' };
  }
  return null;
}

/**
 * Whether Apollo refused the request itself with a 4xx status but no code
 * (a persisted-query hash that does not match the query, or an unsupported
 * persisted-query version): the client's mistake, which must not be logged
 * and answered as our own failure.
 */
function codelessRequestError(error: unknown): boolean {
  // Read by shape, not `instanceof GraphQLError`: under vitest our modules get
  // graphql's .mjs build and Apollo its .js build, two different classes.
  const extensions = typeof error === 'object' && error !== null ? (error as { extensions?: Record<string, unknown> }).extensions : undefined;
  if (extensions === undefined || extensions === null || extensions.code !== undefined) return false;
  const status = (extensions.http as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** Makes Apollo's `formatError`, logging unexpected errors with `log`. */
export function createFormatError(log: (error: unknown) => void) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && CLIENT_CODES.has(code)) {
      const { stacktrace: _dropped, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    if (codelessRequestError(error)) return { message: formatted.message, extensions: { code: 'BAD_REQUEST' } };
    const original = rootCause(error);
    const database = databaseFailure(original);
    if (database) return { message: database.message, locations: formatted.locations, path: formatted.path, extensions: { code: database.code } };
    log(original);
    return {
      message: 'Something went wrong on the server; it has been logged.',
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    };
  };
}
