/**
 * Search cursors. Hits are ordered newest first: creation time (in whole
 * microseconds, PostgreSQL's precision), then conversation id, then seq, all
 * descending, so a position is that triple. A cursor also carries a checksum
 * of the search it came from (the query's normalized words, the
 * conversation it was narrowed to and the filter's conditions): it is only
 * valid for the same search.
 */
import { fnv1a32 } from './checksum.ts';
import { decodeOpaque, encodeOpaque, isUuid, parseSeq } from './opaque.ts';
import { isAcceptedMicros } from './timeRange.ts';

/** A place among the hits: just after the message with this creation time, conversation and seq. */
export interface SearchPosition {
  /** `messages.created_at` in microseconds since 1970-01-01T00:00:00Z. */
  createdMicros: number;
  convId: string;
  seq: number;
}

const PREFIX = 's1';

/**
 * What a search cursor is valid for: the query's key (null: no words), the
 * conversation it is narrowed to (or none) and the key of its filter's
 * conditions ('' for none; `messageFilterKey`). A search of words alone
 * keeps the key it had before filters existed, so its cursors stay valid.
 */
export function searchScopeKey(queryKey: string | null, convId: string | null, filterKey = ''): string {
  const words = `${convId ?? '*'}\n${queryKey ?? ''}`;
  return fnv1a32(queryKey !== null && filterKey === '' ? words : `${words}\n${filterKey}`).toString(36);
}

/** The cursor of `position` in the search `scopeKey`. */
export function encodeSearchCursor(scopeKey: string, position: SearchPosition): string {
  return encodeOpaque(PREFIX, [position.createdMicros, position.convId, position.seq, scopeKey]);
}

/** The position a cursor of the search `scopeKey` names, or null for anything else (another search's cursor included). */
export function decodeSearchCursor(scopeKey: string, cursor: string): SearchPosition | null {
  const fields = decodeOpaque(PREFIX, 4, cursor);
  if (fields === null) return null;
  const [microsText, convId, seqText, cursorScope] = fields as [string, string, string, string];
  const createdMicros = parseSeq(microsText);
  const seq = parseSeq(seqText);
  if (createdMicros === null || !isAcceptedMicros(createdMicros) || seq === null || seq < 1 || !isUuid(convId) || cursorScope !== scopeKey) {
    return null;
  }
  return { createdMicros, convId, seq };
}
