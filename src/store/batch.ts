/**
 * The store's one batch contract, the one DataLoader expects: a function
 * that answers many keys at once answers an array in key order, index i
 * answering key i, with `null` where there is nothing to answer (no such
 * thing, or nothing the viewer may see). Loaders pass it on as it is.
 */

/**
 * `rows` (in any order, at most one per key) in the order of `keys`; null
 * for a key no row answers. `keyString` and `rowKeyString` spell a key and
 * the key a row answers the same way.
 */
export function inKeyOrder<Key, Row>(
  keys: readonly Key[],
  rows: readonly Row[],
  keyString: (key: Key) => string,
  rowKeyString: (row: Row) => string,
): (Row | null)[] {
  const byKey = new Map(rows.map((row) => [rowKeyString(row), row]));
  return keys.map((key) => byKey.get(keyString(key)) ?? null);
}
