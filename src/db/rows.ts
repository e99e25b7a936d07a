/**
 * `db.execute` answers an array on postgres.js and `{ rows }` on PGlite; the
 * store reads every raw statement's rows through this one function.
 */
export function rowsOf<Row>(result: unknown): Row[] {
  if (Array.isArray(result)) return result as Row[];
  return (result as { rows: Row[] }).rows;
}
