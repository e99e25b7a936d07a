/** Who may revoke a message, and until when. */

/** What the rule needs to know about the message, the actor and the clock. */
export interface RevokeFacts {
  actorId: string;
  senderId: string;
  actorRole: 'owner' | 'member';
  conversationKind: 'direct' | 'group';
  createdAtMs: number;
  nowMs: number;
  windowSeconds: number;
}

export type RevokeDecision = { allowed: true } | { allowed: false; reason: 'window-passed' | 'not-sender' };

/**
 * A group's owner may revoke any message at any time; otherwise only the
 * sender, and only within the window (the instant the window ends included).
 * In a direct conversation only the sender, whatever the roles.
 */
export function decideRevoke(facts: RevokeFacts): RevokeDecision {
  if (facts.conversationKind === 'group' && facts.actorRole === 'owner') return { allowed: true };
  if (facts.actorId !== facts.senderId) return { allowed: false, reason: 'not-sender' };
  if (facts.nowMs - facts.createdAtMs > facts.windowSeconds * 1000) return { allowed: false, reason: 'window-passed' };
  return { allowed: true };
}
