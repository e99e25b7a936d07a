import type { conversations, members, messages } from '../db/schema.ts';
import type { RetentionPolicy } from '../history/retention.ts';

/**
 * The shapes the store hands out. Rows are plain data in the words of the
 * domain, never drizzle or GraphQL types; fields stored in a column take
 * their type from the schema (`$inferSelect`), timestamps are ISO strings
 * formatted by PostgreSQL (`isoTime`).
 */

type StoredMessage = typeof messages.$inferSelect;
type StoredConversation = typeof conversations.$inferSelect;
type StoredMember = typeof members.$inferSelect;

/** One message index row: everything about a message but its text. */
export interface MessageRow extends Pick<StoredMessage, 'convId' | 'seq' | 'senderId' | 'revokedBy' | 'replyToSeq' | 'threadRootSeq'> {
  /** ISO 8601, UTC. */
  createdAt: string;
  revokedAt: string | null;
  /** When the text was last edited; null: never. ISO 8601, UTC. */
  editedAt: string | null;
}

/** The `MessageRow` of a row read without its conversation id (`messageColumnsInConversation`), in conversation `convId`. */
export function messageRowIn(convId: string, row: Omit<MessageRow, 'convId'>): MessageRow {
  return {
    convId,
    seq: row.seq,
    senderId: row.senderId,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
    revokedBy: row.revokedBy,
    editedAt: row.editedAt,
    replyToSeq: row.replyToSeq,
    threadRootSeq: row.threadRootSeq,
  };
}

/** The `MessageRow` fields of a row that carries more (a page row also carries the page's snapshot). */
export function messageRowOf(row: MessageRow): MessageRow {
  return messageRowIn(row.convId, row);
}

/** A conversation row as `conversationColumns` selects it, before `toConversationRow`. */
export interface RawConversationRow
  extends Pick<StoredConversation, 'id' | 'title' | 'maxSeq' | 'retentionDays' | 'retentionMaxMessages'>,
    Pick<StoredMember, 'readSeq' | 'clearSeq'> {
  /** The values the tables' check constraints allow. */
  kind: 'direct' | 'group';
  role: 'owner' | 'member';
  historyVisibility: 'shared' | 'since_joined';
  membersMayPin: boolean;
  /** Seqs at or below this are expired, as of the request's clock. */
  expiredThrough: number;
  /** ISO 8601, UTC. */
  lastActivityAt: string;
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
  /** Whether every member may pin messages (else the owner and admins). */
  membersMayPin: boolean;
  /** When the last message was sent (or the conversation created); ISO 8601, UTC. */
  lastActivityAt: string;
}

/** Maps a raw row selected with `conversationColumns` to a `ConversationRow`. */
export const toConversationRow = (r: RawConversationRow): ConversationRow => ({
  id: r.id,
  kind: r.kind,
  title: r.title,
  maxSeq: r.maxSeq,
  role: r.role,
  readSeq: r.readSeq,
  clearSeq: r.clearSeq,
  ownRetention: { days: r.retentionDays, maxMessages: r.retentionMaxMessages },
  expiredThroughSeq: r.expiredThrough,
  historyVisibility: r.historyVisibility,
  membersMayPin: r.membersMayPin,
  lastActivityAt: r.lastActivityAt,
});

/** A unique-constraint violation, as either driver reports it (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
