/**
 * The errors clients see. Each carries a stable `extensions.code` (assert on
 * it, not on the message) and, where one argument is at fault, its name.
 */
import { GraphQLError } from 'graphql';
import type { ArchiveProblem } from '../archive/reader.ts';

/**
 * The input is wrong: names the argument and says what would be right;
 * `reason` tells a client which recovery applies (e.g. `CHANGES_EXPIRED`).
 */
export function badUserInput(message: string, argumentName?: string, reason?: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'BAD_USER_INPUT', ...(argumentName ? { argumentName } : {}), ...(reason ? { reason } : {}) },
  });
}

/**
 * No such thing, or not one the viewer may read: the two are deliberately
 * indistinguishable. `reason` tells a client which recovery applies (e.g.
 * `DEDUPLICATED_MESSAGE_NOT_VISIBLE`).
 */
export function notFound(message: string, reason?: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'NOT_FOUND', ...(reason ? { reason } : {}) } });
}

/** The viewer may read the thing but not do this to it; `reason` says why where a client can act on it (e.g. `ARCHIVED`). */
export function forbidden(message: string, reason?: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'FORBIDDEN', ...(reason ? { reason } : {}) } });
}

/**
 * Archived messages could not be read: their segment is missing, corrupt or
 * unreachable, or did not arrive within ARCHIVE_READ_TIMEOUT_MS (`reason`
 * says which, e.g. `TIMEOUT`). Nothing is shown in their place; asking
 * again may succeed. Where the segment lives stays in the server's log.
 */
export function archiveUnavailable(problem: ArchiveProblem, path?: readonly (string | number)[]): GraphQLError {
  const why = problem === 'timeout' ? 'did not arrive in time' : 'cannot be read right now';
  return new GraphQLError(`Archived messages ${why}; they are left out rather than shown wrong. Try again shortly.`, {
    path,
    extensions: { code: 'ARCHIVE_UNAVAILABLE', reason: problem.toUpperCase().replace('-', '_') },
  });
}

/** No valid token; `status` 401 is applied by Apollo and removed from the body. */
export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

/** Quotes a client's value for an error message, cut short if long. */
export function echo(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}..."` : text;
}
