/**
 * A direct conversation's id is derived from the ordered pair of its users, so
 * both sides (and every retry) find the same one without a lookup table or a
 * constraint that spans conversations.
 */
import { createHash } from 'node:crypto';

/** The conversation id shared by `a` and `b`, whichever of them asks. */
export function directConversationId(a: string, b: string): string {
  const [low, high] = a <= b ? [a, b] : [b, a];
  // Lengths first, so no pair of ids can collide by where the split falls.
  const hex = createHash('sha256').update(`direct:${low.length}:${low}:${high.length}:${high}`).digest('hex');
  // Shaped as an RFC 4122 version-5-style UUID so it fits the uuid column.
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
