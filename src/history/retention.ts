/**
 * Retention: which messages a conversation keeps. The rule, written once:
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
 *
 * Messages are created in seq order (the send statement stamps them under
 * the conversation's row lock, never earlier than the one before), so both
 * rules cut the history at one seq: everything at or below `expiredThroughSeq`
 * is expired. The read path (`retentionFloor` in src/store/sqlFragments.ts)
 * and the purge both use that seq.
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

/** Where a policy cuts a conversation's history at `now`. */
export interface RetentionCutoff {
  /** Messages created before this instant are expired; null when `days` is not set. */
  expiredBefore: Date | null;
  /** Seqs at or below this are expired by `maxMessages`; 0 when it is not set. */
  expiredThroughSeqByCount: number;
}

/** The cut-off of `policy` for a conversation whose newest seq is `maxSeq`. */
export function retentionCutoff(policy: RetentionPolicy, now: Date, maxSeq: number): RetentionCutoff {
  return {
    expiredBefore: policy.days === null ? null : new Date(now.getTime() - policy.days * MS_PER_DAY),
    expiredThroughSeqByCount: policy.maxMessages === null ? 0 : Math.max(0, maxSeq - policy.maxMessages),
  };
}

/** Whether a message (its seq and creation time) is expired under `cutoff`. */
export function isExpired(message: { seq: number; createdAt: Date }, cutoff: RetentionCutoff): boolean {
  if (message.seq <= cutoff.expiredThroughSeqByCount) return true;
  return cutoff.expiredBefore !== null && message.createdAt.getTime() < cutoff.expiredBefore.getTime();
}

/**
 * The seq through which a conversation is expired: the higher of the count
 * rule's seq and `lastSeqCreatedBeforeCutoff` (the newest message created
 * before `expiredBefore`, found through the creation-time index; 0 if none).
 */
export function expiredThroughSeq(cutoff: RetentionCutoff, lastSeqCreatedBeforeCutoff: number): number {
  return Math.max(cutoff.expiredThroughSeqByCount, cutoff.expiredBefore === null ? 0 : lastSeqCreatedBeforeCutoff);
}
