/**
 * The server's logger: pino, one JSON line per event. Logs never carry a
 * request's values (message text, user ids in arguments, tokens), and that
 * includes errors: a database error arrives with its SQL and every bound
 * value (PGlite's `query` and `params`, postgres.js's `query` and
 * `parameters`), a `detail` such as "Key (id)=(…) already exists" or
 * "Failing row contains (…)", and a message that may quote the value it
 * refused. `serializeError` keeps only what names the failure.
 */
import { type DestinationStream, pino, type Logger } from 'pino';

export type { Logger };

/** Makes the logger at `level` ('silent' in tests), writing to stdout or to `destination`. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'backscroll' }, serializers: { err: serializeError } };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/**
 * Fields that name what failed and never hold a value, under the name the
 * log gives them: the SQLSTATE code and severity, where in PostgreSQL it was
 * raised, and the names of the objects involved (PGlite spells them `table`,
 * postgres.js `table_name`; the log says `table` for both). Everything else
 * is dropped: `query`, `params`, `parameters`, `args`, `detail`, `hint`,
 * `where` and `internalQuery` can all carry bound values or SQL.
 */
const NAMING_FIELDS: Record<string, string> = {
  name: 'name',
  code: 'code',
  severity: 'severity',
  routine: 'routine',
  file: 'file',
  line: 'line',
  constraint: 'constraint',
  constraint_name: 'constraint',
  table: 'table',
  table_name: 'table',
  column: 'column',
  column_name: 'column',
  schema: 'schema',
  schema_name: 'schema',
  dataType: 'dataType',
  data_type_name: 'dataType',
  errno: 'errno',
  syscall: 'syscall',
};

/** How deep `cause` chains are followed. */
const MAX_CAUSES = 5;

/**
 * What the logger writes for an error: its type, message and stack, the
 * fields in NAMING_FIELDS, and its `cause` the same way. Every value bound to
 * the failed statement (taken from the error and its causes) is replaced by
 * `[bound value]` in messages and stacks, and a data exception (SQLSTATE
 * class 22), whose message quotes the input it refused, has every quoted
 * part blanked.
 */
export function serializeError(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  return serializeOne(error as Record<string, unknown>, boundValues(error), 0);
}

function serializeOne(error: Record<string, unknown>, values: string[], depth: number): Record<string, unknown> {
  const dataException = typeof error.code === 'string' && error.code.startsWith('22');
  const scrub = (text: unknown) => (typeof text === 'string' ? redact(text, values, dataException) : undefined);
  const out: Record<string, unknown> = {
    type: (error.constructor as { name?: string } | undefined)?.name ?? 'Object',
    message: scrub(error.message),
  };
  for (const [field, logged] of Object.entries(NAMING_FIELDS)) {
    const value = error[field];
    if (typeof value === 'string' || typeof value === 'number') out[logged] = value;
  }
  out.stack = scrub(error.stack);
  const cause = error.cause;
  if (typeof cause === 'object' && cause !== null && depth < MAX_CAUSES) {
    out.cause = serializeOne(cause as Record<string, unknown>, values, depth + 1);
  }
  return out;
}

/** The values bound to the statement behind `error` and its causes, as text, longest first. */
function boundValues(error: object): string[] {
  const values = new Set<string>();
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSES && typeof current === 'object' && current !== null; depth++) {
    // postgres.js defines `parameters` as a non-enumerable property: read it by name.
    const { params, parameters } = current as { params?: unknown; parameters?: unknown };
    for (const list of [params, parameters]) {
      if (!Array.isArray(list)) continue;
      for (const value of list) values.add(asText(value));
    }
    current = (current as { cause?: unknown }).cause;
  }
  return [...values].filter((v) => v.length > 0).sort((a, b) => b.length - a.length);
}

/** A bound value as PostgreSQL would print it. */
function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value) ?? '';
  return String(value);
}

/** Values this short are redacted only where quoted: bare, they would match inside ordinary words. */
const SHORTEST_BARE_VALUE = 4;
const REDACTED = '[bound value]';

/** `text` without the bound `values` and, for data exceptions, without its quoted parts. */
function redact(text: string, values: readonly string[], dataException: boolean): string {
  let result = text;
  for (const value of values) {
    result = result.split(`"${value}"`).join(`"${REDACTED}"`);
    if (value.length >= SHORTEST_BARE_VALUE) result = result.split(value).join(REDACTED);
  }
  // Whatever else a data exception quotes is input too, bound or not.
  if (dataException) result = result.replace(/"(?:[^"]|"")*"/g, (quoted) => (quoted === `"${REDACTED}"` ? quoted : '"…"'));
  return result;
}
