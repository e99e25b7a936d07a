/**
 * The one way the store says a viewer may not read or do something. Each
 * store function answers a discriminated union of its own successes, these
 * refusals, and any other outcome it has (a read cursor beyond `max_seq`, a
 * direct conversation that has no owner); expected refusals are values, never
 * exceptions or nulls.
 */

/**
 * No such thing, or nothing the viewer may read: the API deliberately
 * answers both alike (`NOT_FOUND`), so the store does not tell them apart
 * either.
 */
export interface NotFound {
  readonly kind: 'not-found';
}

/** The viewer may read it but may not do this (`FORBIDDEN`). */
export interface Forbidden {
  readonly kind: 'forbidden';
}

/** The one `NotFound` value, for functions that have nothing to add to it. */
export const NOT_FOUND: NotFound = Object.freeze({ kind: 'not-found' });

/** The one `Forbidden` value, for functions that have nothing to add to it. */
export const FORBIDDEN: Forbidden = Object.freeze({ kind: 'forbidden' });
