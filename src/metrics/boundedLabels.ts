/**
 * Label values with bounded cardinality. Every distinct label value is a
 * time series held in memory until the process exits, and operation names
 * come from clients: the first `limit` distinct values are kept as they are,
 * later ones are counted as `other`, so no client can grow the registry
 * without bound.
 */

/** The label of a request without an operation name (or one that never got as far as naming one). */
export const ANONYMOUS = 'anonymous';
/** The label of every value past the limit, or not shaped like a name. */
export const OTHER = 'other';

/** A GraphQL name (the only operation names a parsed document can carry), at most 100 characters. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]{0,99}$/;

/** Maps raw values to at most `limit` distinct labels plus `anonymous` and `other`; one per server. */
export function boundedLabels(limit: number): (value: string | null | undefined) => string {
  const seen = new Set<string>();
  return (value) => {
    if (value === null || value === undefined || value === '') return ANONYMOUS;
    if (!NAME.test(value)) return OTHER;
    if (seen.has(value)) return value;
    if (seen.size >= limit) return OTHER;
    seen.add(value);
    return value;
  };
}
