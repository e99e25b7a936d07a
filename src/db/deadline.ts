/**
 * A bound on how long one statement may keep a request waiting, whatever the
 * database or the driver does. `statement_timeout` bounds a statement once
 * it runs; it does not bound the wait for a connection, and while
 * PostgreSQL is down postgres.js keeps queued statements until a reconnect
 * succeeds, which would hang requests for as long as the outage lasts.
 */
import { DatabaseNoAnswerError } from './errors.ts';

/**
 * `work`, or a DatabaseNoAnswerError (a DatabaseUnavailableError) once `ms`
 * have passed; `onExpire` then withdraws the work (cancels the queued
 * statement) where it can.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onExpire: () => void): Promise<T> {
  // No deadline (a connection without a statement timeout, for migrations).
  if (ms === Number.POSITIVE_INFINITY) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onExpire();
      reject(new DatabaseNoAnswerError(`The database did not answer within ${ms} ms.`));
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
