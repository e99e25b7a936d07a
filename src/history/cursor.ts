/**
 * Page cursors. A cursor names a position (a seq) in one conversation; it is
 * valid for that conversation only and stays valid after the message at that
 * seq is hidden, revoked or purged, because it names the position, not the row.
 */
import { decodeOpaque, encodeOpaque, isUuid, parseSeq } from './opaque.ts';

const PREFIX = 'c1';

/** The cursor for position `seq` in conversation `convId`. */
export function encodeCursor(convId: string, seq: number): string {
  return encodeOpaque(PREFIX, [convId, seq]);
}

/** Why a cursor was refused. */
export type CursorProblem = 'malformed' | 'other-conversation';

/** Decodes a cursor for `convId`: its seq, or why it cannot be used here. */
export function decodeCursor(
  convId: string,
  cursor: string,
): { ok: true; seq: number } | { ok: false; problem: CursorProblem } {
  const fields = decodeOpaque(PREFIX, 2, cursor);
  if (fields === null) return { ok: false, problem: 'malformed' };
  const [cursorConvId, seqText] = fields as [string, string];
  const seq = parseSeq(seqText);
  if (!isUuid(cursorConvId) || seq === null) return { ok: false, problem: 'malformed' };
  if (cursorConvId !== convId) return { ok: false, problem: 'other-conversation' };
  return { ok: true, seq };
}
