/**
 * What a command prints when it fails: the database's own words. A failing
 * statement reaches the top of a command wrapped by drizzle (whose message
 * is the whole statement and every bound value: a hundred uuids for a bulk
 * insert) or by our runner (`DatabaseTimeoutError` around the driver's
 * error); what an operator needs is PostgreSQL's SQLSTATE code and message,
 * its detail and hint, and the cause of each wrapper. No stack for those:
 * a failed statement's stack points into the driver, not at a mistake.
 */
import { DrizzleQueryError } from 'drizzle-orm';

/** The parts of an error the text is made of; PostgreSQL's errors (postgres.js, PGlite) carry all of them. */
interface ErrorParts {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  detail?: unknown;
  hint?: unknown;
  cause?: unknown;
  errors?: unknown;
  stack?: unknown;
}

/** How many causes are followed; a longer chain is cut off rather than looped. */
const MAX_CHAIN = 8;

/**
 * `error` as lines, the first `<code> <message>` (a SQLSTATE such as 57014,
 * or a driver code such as ECONNREFUSED), then `cause: <code> <message>`
 * for each cause that says something of its own: drizzle's query wrapper
 * never does, nor does a wrapper repeating its cause's message. Detail and
 * hint follow the error they belong to. An error with no code anywhere in
 * its chain is not a failed statement but a bug: its stack is kept.
 */
export function failureText(error: unknown): string {
  const chain = causeChain(error);
  const said = chain.filter((e, i) => !(e instanceof DrizzleQueryError) && !repeatsCause(e, chain[i + 1]));
  const lines = said.flatMap((e, i) => [
    `${i === 0 ? '' : 'cause: '}${headline(e)}`,
    ...(['detail', 'hint'] as const).flatMap((part) => (text(e[part]) === null ? [] : [`  ${part}: ${text(e[part])}`])),
  ]);
  if (chain.some((e) => text(e.code) !== null)) return lines.join('\n');
  const frames = String(text(said.at(-1)?.stack) ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  return [...lines, ...frames].join('\n');
}

/** `error`, its cause, their cause..., each once. */
function causeChain(error: unknown): ErrorParts[] {
  const chain: ErrorParts[] = [];
  let current = error;
  while (current !== undefined && current !== null && chain.length < MAX_CHAIN && !chain.includes(current as ErrorParts)) {
    chain.push(typeof current === 'object' ? (current as ErrorParts) : { message: String(current) });
    current = typeof current === 'object' ? (current as ErrorParts).cause : undefined;
  }
  return chain;
}

/** A codeless wrapper that only repeats its cause's message (`DatabaseTimeoutError` does). */
function repeatsCause(e: ErrorParts, cause: ErrorParts | undefined): boolean {
  return cause !== undefined && text(e.code) === null && messageOf(e) === messageOf(cause);
}

/** `<code> <message>`; without a code, `<name>: <message>` unless the name is plain `Error`. */
function headline(e: ErrorParts): string {
  const code = text(e.code);
  if (code !== null) return `${code} ${messageOf(e)}`.trimEnd();
  const name = text(e.name);
  return name === null || name === 'Error' ? messageOf(e) || 'Error' : `${name}: ${messageOf(e)}`;
}

/**
 * An error's message; for an `AggregateError` without one (Node's failed
 * connection to every address of a host name), its errors' messages.
 */
function messageOf(e: ErrorParts): string {
  const own = text(e.message);
  if (own !== null || !Array.isArray(e.errors)) return own ?? '';
  return [...new Set(e.errors.map((inner) => text((inner as ErrorParts | null)?.message)).filter((m) => m !== null))].join('; ');
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}
