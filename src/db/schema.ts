/**
 * The tables, as drizzle-kit reads them to generate `drizzle/` migrations.
 *
 * Every conversation-scoped table leads its primary key with `conv_id`, and no
 * constraint spans conversations, so a deployment can shard on `conv_id`
 * (Citus) without changing a query. Message index rows and bodies live apart:
 * page scans touch only the small fixed-width index rows.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    /** 'direct' | 'group'; a direct conversation's id is derived from its two members. */
    kind: text('kind').notNull(),
    title: text('title'),
    /** The seq counter: bumped under this row's lock in the send statement. */
    maxSeq: bigint('max_seq', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastActivityAt: timestamp('last_activity_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('conversations_kind_check', sql`${t.kind} in ('direct', 'group')`)],
);

export const members = pgTable(
  'members',
  {
    convId: uuid('conv_id').notNull(),
    userId: text('user_id').notNull(),
    /** 'owner' | 'member'. */
    role: text('role').notNull().default('member'),
    joinedAt: timestamp('joined_at', { withTimezone: true }).notNull().defaultNow(),
    /** Clear-history watermark: seqs at or below it are invisible to this member. */
    clearSeq: bigint('clear_seq', { mode: 'number' }).notNull().default(0),
    /** Read cursor; only ever moves forward. */
    readSeq: bigint('read_seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.userId] }),
    check('members_role_check', sql`${t.role} in ('owner', 'member')`),
    // "Which conversations is this user in" (the inbox) is the one lookup by user.
    index('members_user_idx').on(t.userId),
  ],
);

export const messages = pgTable(
  'messages',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    senderId: text('sender_id').notNull(),
    /** 'text' for now; room for other kinds without a new table. */
    kind: text('kind').notNull().default('text'),
    clientMsgId: text('client_msg_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: text('revoked_by'),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.seq] }),
    // Idempotent sends: a retry with the same client id finds the first copy.
    uniqueIndex('messages_client_msg_id_idx').on(t.convId, t.senderId, t.clientMsgId),
  ],
);

export const messageBodies = pgTable(
  'message_bodies',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    text: text('text').notNull(),
  },
  (t) => [primaryKey({ columns: [t.convId, t.seq] })],
);

/** "Deleted for me": one row per (member, message), never an array on the message. */
export const messageHides = pgTable(
  'message_hides',
  {
    convId: uuid('conv_id').notNull(),
    userId: text('user_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    hiddenAt: timestamp('hidden_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.convId, t.userId, t.seq] })],
);
