/**
 * Texts a statement read together with their message rows (a page, a
 * thread, search hits). Each goes into the request's body loader, for any
 * lookup of that message by key, and is also kept by its row, so
 * `Message.content` of that very row answers it at once: through the
 * loader, each of a page's 50 edges waited on a promise of its own, and
 * graphql-jit then finished each edge's content in a later microtask.
 * The text rides on the row under a symbol only this module knows, so it
 * goes when the row does. It was a WeakMap from row to text: 50 entries a
 * page cost about 10 µs to set, and weak entries are extra work for every
 * garbage collection (`primeWarmText` was 3% of a page's server time).
 */
import type { MessageRow } from '../store/rows.ts';
import type { Loaders } from './loaders.ts';

const WARM_TEXT = Symbol('warmText');

/** A row that may carry the text read with it. */
type CarryingRow = MessageRow & { [WARM_TEXT]?: string };

/** Hands `text`, read with `row`, to `loaders` and to `row`'s content. */
export function primeWarmText(loaders: Loaders, row: MessageRow, text: string): void {
  loaders.body.prime({ convId: row.convId, seq: row.seq }, { kind: 'text', text });
  (row as CarryingRow)[WARM_TEXT] = text;
}

/** The text read with `row`, if it was. */
export function warmTextOf(row: MessageRow): string | undefined {
  return (row as CarryingRow)[WARM_TEXT];
}
