/** Who may edit a message, and until when. */

/** What the rule needs to know about the message, the actor and the clock. */
export interface EditFacts {
  actorId: string;
  senderId: string;
  revoked: boolean;
  erased: boolean;
  /** The text is in the cold archive (no warm body): segments are immutable. */
  archived: boolean;
  createdAtMs: number;
  nowMs: number;
  /** null: no window, any time. */
  windowSeconds: number | null;
}

export type EditDecision = { allowed: true } | { allowed: false; reason: 'not-sender' | 'revoked' | 'erased' | 'archived' | 'window-passed' };

/**
 * Only the sender edits, and only text that still exists: not revoked, not
 * erased, not archived (a segment is immutable, and a warm copy beside it
 * would be archived again over it). With a window, until its last instant
 * included, as for revokes.
 */
export function decideEdit(facts: EditFacts): EditDecision {
  if (facts.actorId !== facts.senderId) return { allowed: false, reason: 'not-sender' };
  if (facts.revoked) return { allowed: false, reason: 'revoked' };
  if (facts.erased) return { allowed: false, reason: 'erased' };
  if (facts.windowSeconds !== null && facts.nowMs - facts.createdAtMs > facts.windowSeconds * 1000) return { allowed: false, reason: 'window-passed' };
  if (facts.archived) return { allowed: false, reason: 'archived' };
  return { allowed: true };
}
