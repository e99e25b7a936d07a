/**
 * Texts a statement read together with their message rows (a page, a
 * thread, search hits). Each goes into the request's body loader, for any
 * lookup of that message by key, and is also kept by its row, so
 * `Message.content` of that very row answers it at once: through the
 * loader, each of a page's 50 edges waited on a promise of its own, and
 * graphql-jit then finished each edge's content in a later microtask.
 * Kept weakly: a row, and its text, go when the request's result does.
 */
import type { MessageRow } from '../store/rows.ts';
import type { Loaders } from './loaders.ts';

const warmTexts = new WeakMap<MessageRow, string>();

/** Hands `text`, read with `row`, to `loaders` and to `row`'s content. */
export function primeWarmText(loaders: Loaders, row: MessageRow, text: string): void {
  loaders.body.prime({ convId: row.convId, seq: row.seq }, { kind: 'text', text });
  warmTexts.set(row, text);
}

/** The text read with `row`, if it was. */
export function warmTextOf(row: MessageRow): string | undefined {
  return warmTexts.get(row);
}
