import type { RetentionPolicy } from '../history/retention.ts';

/**
 * The shapes the store hands out. Rows are plain data in the words of the
 * domain, never drizzle or GraphQL types.
 */

/** One message index row: everything about a message but its text. */
export interface MessageRow {
  convId: string;
  seq: number;
  senderId: string;
  /** ISO 8601, UTC. */
  createdAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
}

/** A message row as SQL returns it (snake case), before `toMessageRow`. */
export interface RawMessageRow {
  conv_id: string;
  seq: number;
  sender_id: string;
  created_at: string;
  revoked_at: string | null;
  revoked_by: string | null;
}

/** Maps a raw row selected with `messageColumns` to a `MessageRow`. */
export function toMessageRow(raw: RawMessageRow): MessageRow {
  return {
    convId: raw.conv_id,
    seq: raw.seq,
    senderId: raw.sender_id,
    createdAt: raw.created_at,
    revokedAt: raw.revoked_at,
    revokedBy: raw.revoked_by,
  };
}

/** A conversation as one member sees it. */
export interface ConversationRow {
  id: string;
  kind: 'direct' | 'group';
  title: string | null;
  maxSeq: number;
  /** The viewer's membership. */
  role: 'owner' | 'member';
  readSeq: number;
  clearSeq: number;
  /** The conversation's own retention limits (the server's apply on top). */
  ownRetention: RetentionPolicy;
  /** Seqs at or below this are expired, as of the request's clock. */
  expiredThroughSeq: number;
  /** What members who join later see of older history. */
  historyVisibility: 'shared' | 'since_joined';
  /** When the last message was sent (or the conversation created); ISO 8601, UTC. */
  lastActivityAt: string;
}

/** A unique-constraint violation, as either driver reports it (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
