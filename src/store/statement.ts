/**
 * Statements written once against the schema and rendered to SQL text once,
 * when their module loads. A call binds its values into that text, so a
 * request pays neither for building the statement nor for drizzle's walk
 * over its fragments, tables and columns (building and rendering the page
 * statement took 40-50 µs of a page request's ~350 µs of Node CPU; binding
 * takes about 8), and each shape of a statement has one text, so PostgreSQL
 * keeps one prepared statement for it.
 */
import { Param, Placeholder, SQL, type SQLChunk, sql, StringChunk } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';

/** One placeholder per value of a statement, by the value's name. */
export type Slots<Values> = { readonly [Name in keyof Values & string]: Placeholder<Name, Values[Name]> };

/** A statement rendered once; each call answers it with `values` bound, ready for `SqlRunner.rows`. */
export type Statement<Values> = (values: Values) => SQL;

const dialect = new PgDialect();

/** How one parameter of a rendered statement gets its value: by name, or the constant the statement was written with. */
type Binding<Values> = (values: Values) => unknown;

/**
 * Renders the statement `build` writes, with a placeholder for each named
 * value it uses; the answer binds values by those names. Shapes that differ
 * in more than values (another order, another range) are separate statements.
 */
export function statement<Values extends object>(build: (slots: Slots<Values>) => SQL): Statement<Values> {
  const slots = new Proxy({}, { get: (_target, name) => sql.placeholder(String(name)) }) as Slots<Values>;
  const { sql: text, params } = dialect.sqlToQuery(build(slots));
  // PgDialect numbers parameters $1, $2, ... in order; the statements here
  // have no other `$` followed by a digit (no dollar quoting).
  const pieces = text.split(/\$(\d+)/);
  const texts = pieces.filter((_, i) => i % 2 === 0).map((piece) => new StringChunk(piece));
  const numbers = pieces.filter((_, i) => i % 2 === 1).map(Number);
  if (numbers.length !== params.length || numbers.some((n, i) => n !== i + 1)) {
    throw new Error(`A statement must number its ${params.length} parameters $1 to $${params.length} in order, got: ${text}`);
  }
  const bindings: Binding<Values>[] = params.map((param) => {
    const placeholder = param instanceof Param ? param.value : param;
    if (!(placeholder instanceof Placeholder)) return () => param;
    const name = placeholder.name as keyof Values;
    return (values) => {
      const value = values[name];
      if (value === undefined) throw new Error(`A statement needs a value for \`${String(name)}\`, got undefined.`);
      return value;
    };
  });
  return (values) => {
    const chunks: SQLChunk[] = [texts[0]!];
    for (let i = 0; i < bindings.length; i++) {
      const value = bindings[i]!(values);
      // A bare value renders as a parameter, as in drizzle's `sql` template,
      // and costs a fraction of a `Param` (whose encoder drizzle inspects on
      // every render); an array must be a `Param`, or it renders as a list.
      chunks.push(typeof value === 'object' && value !== null ? new Param(value) : (value as SQLChunk), texts[i + 1]!);
    }
    return new SQL(chunks);
  };
}
