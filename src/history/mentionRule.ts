/** Who a message may mention, and how the ids a sender gives are kept. Pure: no I/O. */

/** The most distinct users one message may name. */
export const MAX_MENTIONED_USERS = 50;

/**
 * The ids a sender gave, each once, in the order each first appears (the
 * order `Message.mentions` answers); null when more than the limit remain.
 */
export function distinctMentions(ids: readonly string[]): string[] | null {
  const distinct = [...new Set(ids)];
  return distinct.length > MAX_MENTIONED_USERS ? null : distinct;
}

/** What the rule needs to know about the sender and the conversation. */
export interface EveryoneMentionFacts {
  conversationKind: 'direct' | 'group';
  senderRole: 'owner' | 'member';
  /** The caller's token carries the `admin` role. */
  admin: boolean;
}

/**
 * A group's owner and admins may mention everyone: it reaches every member's
 * mention count, so ordinary members may not, and a direct conversation has
 * no "everyone" beyond the one other person, who is named instead.
 */
export function mayMentionEveryone(facts: EveryoneMentionFacts): boolean {
  return facts.conversationKind === 'group' && (facts.senderRole === 'owner' || facts.admin);
}
