/**
 * Database failures the API answers with their own codes instead of a
 * generic internal error: a statement that ran past the statement timeout,
 * and a database that cannot be reached. The store and the runner know
 * nothing of GraphQL; the error formatter maps these to client codes.
 */

/** A statement ran past `statement_timeout` and was cancelled; its connection is free again. */
export class DatabaseTimeoutError extends Error {
  override readonly name = 'DatabaseTimeoutError';
}

/** The database could not be reached or dropped the connection. */
export class DatabaseUnavailableError extends Error {
  override readonly name: string = 'DatabaseUnavailableError';
}

/**
 * The database did not answer within a deadline of ours (deadline.ts): it
 * may be stopped or cut off with the connection still open, which nothing
 * frees but closing the connection (a cancel request would hang too).
 */
export class DatabaseNoAnswerError extends DatabaseUnavailableError {
  override readonly name: string = 'DatabaseNoAnswerError';
}

// SQLSTATE classes and driver codes: 57014 query_canceled (by statement_timeout),
// 57P01-57P03 shutdown and startup, 08xxx connection exceptions.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
]);

/** `error` as one of the typed database errors when it is one, else unchanged. */
export function classifyDatabaseError(error: unknown): unknown {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return error;
  const message = (error as Error).message;
  if (code === '57014') return new DatabaseTimeoutError(message, { cause: error });
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return new DatabaseUnavailableError(message, { cause: error });
  return error;
}
