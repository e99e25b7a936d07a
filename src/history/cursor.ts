/**
 * Cursors. A cursor names a position in one conversation: a seq for pages,
 * a change-feed number for `changes`. It is valid for that conversation
 * only, and a page cursor stays valid after the message at its seq is
 * hidden, revoked or purged, because it names the position, not the row.
 * The two kinds have their own prefixes, so one is never taken for the other.
 * Cursors are not signed, so each decoded field is validated (see opaque.ts
 * for why validation rather than signing).
 */
import { decodeScoped, encodeOpaque, parseSeq, scopeTag } from './opaque.ts';
import { seqTokenMaker } from './tokenRuns.ts';

/** Why a cursor was refused. */
type CursorProblem = 'malformed' | 'other-conversation';

type Decoded = { ok: true; seq: number } | { ok: false; problem: CursorProblem };

/**
 * Encoder and decoder of one kind of position cursor. It names its
 * conversation by `scopeTag`; cursors of the previous version, with the
 * whole uuid under `legacyPrefix`, are still read (`decodeScoped`, opaque.ts).
 */
function positionCursor(prefix: string, legacyPrefix: string) {
  // A page's cursors are made a run at a time (tokenRuns.ts).
  const encode = seqTokenMaker(
    (convId) => `${prefix}:${scopeTag(convId)}:`,
    (convId, position) => encodeOpaque(prefix, [scopeTag(convId), position]),
  );
  return {
    encode: (convId: string, position: number): string => encode(convId, position),
    decode: (convId: string, cursor: string): Decoded => {
      const decoded = decodeScoped(prefix, legacyPrefix, 2, cursor, convId);
      if (decoded === null) return { ok: false, problem: 'malformed' };
      return checked(decoded.wellFormedScope, decoded.ownScope, parseSeq(decoded.fields[0]!));
    },
  };
}

/** A decoded cursor's verdict: a well-formed scope of this conversation and a seq, or why not. */
function checked(wellFormedScope: boolean, sameConversation: boolean, seq: number | null): Decoded {
  if (!wellFormedScope || seq === null) return { ok: false, problem: 'malformed' };
  if (!sameConversation) return { ok: false, problem: 'other-conversation' };
  return { ok: true, seq };
}

const pageCursor = positionCursor('c2', 'c1');
const changeCursor = positionCursor('h2', 'h1');

/** The page cursor for position `seq` in conversation `convId`. */
export const encodeCursor = pageCursor.encode;
/** Decodes a page cursor for `convId`: its seq, or why it cannot be used here. */
export const decodeCursor = pageCursor.decode;

/** The change-feed cursor after entry `changeSeq` of conversation `convId`. */
export const encodeChangeCursor = changeCursor.encode;
/** Decodes a change-feed cursor for `convId`: its entry number (as `seq`), or why it cannot be used. */
export const decodeChangeCursor = changeCursor.decode;
