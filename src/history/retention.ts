/**
 * Retention: which messages a conversation keeps. The rule:
 *
 * - `days`: a message is expired when it was created more than `days` × 24 h
 *   before now; one created exactly at the cut-off instant is kept.
 * - `maxMessages`: the newest `maxMessages` seqs are kept, older seqs are
 *   expired. Seqs, not surviving rows: a message purged inside the window
 *   leaves a hole rather than bringing an older message back into view
 *   (clients holding local copies would see history reappear), and the
 *   cut-off stays one subtraction, so reads apply it inside the index range
 *   scan instead of counting rows.
 * - A message is expired when either rule says so.
 * - Under a `days` rule, seqs below the oldest stored message are expired
 *   too: once the purge has deleted what expired, no stored message is older
 *   than the cut-off, and the cut-off must not fall back as if nothing had.
 *
 * Messages are created in seq order (the send statement stamps them under
 * the conversation's row lock, never earlier than the one before), so both
 * rules cut the history at one seq. That seq is computed in SQL only, by
 * `expiredThrough` in src/store/sqlFragments.ts, which every read and the
 * purge use; test/integration/retentionRule.test.ts checks its boundaries
 * against a real database. This module holds the policy and its limits.
 */

export const MS_PER_DAY = 86_400_000;
/** Upper bounds on what a policy may say, so a typo cannot overflow a timestamp. */
export const MAX_RETENTION_DAYS = 36_500;
export const MAX_RETENTION_MESSAGES = 1_000_000_000;

/** A retention policy; null means "no limit of this kind". */
export interface RetentionPolicy {
  days: number | null;
  maxMessages: number | null;
}

export const KEEP_EVERYTHING: RetentionPolicy = { days: null, maxMessages: null };

/** The shorter of two limits, null meaning unlimited. */
function shorter(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

/**
 * The policy in force for a conversation: the server's limits, shortened by
 * the conversation's own where it sets a shorter one. A conversation cannot
 * lengthen the server's limit.
 */
export function effectivePolicy(server: RetentionPolicy, conversation: RetentionPolicy): RetentionPolicy {
  return { days: shorter(server.days, conversation.days), maxMessages: shorter(server.maxMessages, conversation.maxMessages) };
}

/** Why a requested policy is refused, naming the field; null when it is acceptable. */
export function policyProblem(requested: RetentionPolicy, server: RetentionPolicy): { field: 'days' | 'maxMessages'; message: string } | null {
  const checks = [
    { field: 'days', value: requested.days, max: MAX_RETENTION_DAYS, limit: server.days },
    { field: 'maxMessages', value: requested.maxMessages, max: MAX_RETENTION_MESSAGES, limit: server.maxMessages },
  ] as const;
  for (const { field, value, max, limit } of checks) {
    if (value === null) continue;
    if (!Number.isInteger(value) || value < 1 || value > max) {
      return { field, message: `\`${field}\` must be a whole number from 1 to ${max}, or null for the server's default.` };
    }
    if (limit !== null && value > limit) {
      return { field, message: `\`${field}\` may shorten the server's limit of ${limit} but not lengthen it.` };
    }
  }
  return null;
}
