/** Who may pin and unpin a conversation's messages, and how many pins it holds. Pure: no I/O. */

/** The most messages one conversation keeps pinned. */
export const MAX_PINS_PER_CONVERSATION = 50;

/** What the rule needs to know about the actor, the conversation and the message. */
export interface PinFacts {
  actorRole: 'owner' | 'member';
  /** The caller's token carries the `admin` role. */
  admin: boolean;
  conversationKind: 'direct' | 'group';
  /** The group's `membersMayPin` setting. */
  membersMayPin: boolean;
  /** Pinning (true) or unpinning. */
  pin: boolean;
  revoked: boolean;
  alreadyPinned: boolean;
  /** How many messages of the conversation are pinned now. */
  pinnedCount: number;
}

export type PinDecision =
  | { allowed: true; changes: boolean }
  | { allowed: false; reason: 'not-allowed' | 'revoked' | 'too-many' };

/**
 * In a group, the owner and admins pin and unpin, and every member too when
 * `membersMayPin` is set; in a direct conversation (no owner) both sides
 * may. A revoked message takes no pin (revoking removes its pin). A pin past
 * the limit is refused; pinning a pinned message, or unpinning one that is
 * not, changes nothing.
 */
export function decidePin(facts: PinFacts): PinDecision {
  const mayPin = facts.conversationKind === 'direct' || facts.actorRole === 'owner' || facts.admin || facts.membersMayPin;
  if (!mayPin) return { allowed: false, reason: 'not-allowed' };
  if (!facts.pin) return { allowed: true, changes: facts.alreadyPinned };
  if (facts.alreadyPinned) return { allowed: true, changes: false };
  if (facts.revoked) return { allowed: false, reason: 'revoked' };
  if (facts.pinnedCount >= MAX_PINS_PER_CONVERSATION) return { allowed: false, reason: 'too-many' };
  return { allowed: true, changes: true };
}
