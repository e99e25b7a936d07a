/**
 * The tables, as drizzle-kit reads them to generate `drizzle/` migrations.
 *
 * Every conversation-scoped table leads its primary key with `conv_id`, and no
 * constraint spans conversations, so a deployment can shard on `conv_id`
 * (Citus) without changing a query. Message index rows and bodies live apart:
 * page scans touch only the small fixed-width index rows.
 */
import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  bigserial,
  check,
  customType,
  integer,
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
    /** Also the newest message's creation time: sends stamp messages no earlier than it, so creation time follows seq. */
    lastActivityAt: timestamp('last_activity_at', { withTimezone: true }).notNull().defaultNow(),
    /** The group's own retention limits; null: the server's (see src/history/retention.ts). */
    retentionDays: integer('retention_days'),
    retentionMaxMessages: integer('retention_max_messages'),
    /** The change-feed counter: bumped under this row's lock with each change, so feed order is commit order. */
    changeSeq: bigint('change_seq', { mode: 'number' }).notNull().default(0),
    /** Change-feed entries at or below this were pruned; a cursor below it must reload. */
    changesPrunedThrough: bigint('changes_pruned_through', { mode: 'number' }).notNull().default(0),
    /** 'shared' | 'since_joined': what members who join later see of older history. */
    historyVisibility: text('history_visibility').notNull().default('shared'),
    /** Whether every member may pin messages (`setConversationSettings`); otherwise the owner and admins. */
    membersMayPin: boolean('members_may_pin').notNull().default(false),
    /**
     * More than `LARGE_GROUP_MEMBERS` members at some point (src/history/inboxFanout.ts):
     * sends no longer copy its activity into each member's `user_inbox` row;
     * the inbox reads it from here. Never unset (a group that shrinks stays large).
     */
    large: boolean('large').notNull().default(false),
  },
  (t) => [
    check('conversations_kind_check', sql`${t.kind} in ('direct', 'group')`),
    check('conversations_history_visibility_check', sql`${t.historyVisibility} in ('shared', 'since_joined')`),
  ],
);

/**
 * A member's join time to the millisecond, in epoch milliseconds: their
 * place in join order before `user_id` and what a members cursor carries,
 * so the row a cursor came from compares equal, never after itself. Taken
 * at the UTC timestamp because `date_trunc` of a timestamptz depends on the
 * session's time zone. Stored (`members.joined_millis`) rather than
 * computed for each listed member: spelling the join time twice per row
 * (as ISO text and as these digits) was 45% of the PostgreSQL time of a
 * member list of 100 (README, Performance: the eighteenth session).
 */
export function joinMillis(joinedAt: AnyColumn): SQL {
  return sql`(extract(epoch from date_trunc('milliseconds', ${joinedAt} at time zone 'UTC')) * 1000)::int8`;
}

/**
 * What `members_join_order_idx` is partial on: true of every member (no
 * one joined at -infinity), so the index holds them all, but PostgreSQL
 * uses it only for a statement that says this too, as the member list
 * does. Without it, generic plans (`plan_cache_mode = force_generic_plan`,
 * db/client.ts) probed one member by (conv_id, user_id) through this index
 * rather than the primary key, its cost estimate a hair lower, reading
 * every member of the conversation: in a group of 10,000 that was 86
 * buffers and about 0.45 ms in each page, send and members statement.
 */
export function listedInJoinOrder(joinedAt: AnyColumn): SQL {
  return sql`${joinedAt} > '-infinity'::timestamptz`;
}

export const members = pgTable(
  'members',
  {
    convId: uuid('conv_id').notNull(),
    userId: text('user_id').notNull(),
    /** 'owner' | 'member'. */
    role: text('role').notNull().default('member'),
    joinedAt: timestamp('joined_at', { withTimezone: true }).notNull().defaultNow(),
    /** `joined_at` in epoch milliseconds, as the member list orders and its cursors name members (`joinMillis`). */
    joinedMillis: bigint('joined_millis', { mode: 'number' })
      .notNull()
      .generatedAlwaysAs((): SQL => joinMillis(members.joinedAt)),
    /** Clear-history watermark: seqs at or below it are invisible to this member. */
    clearSeq: bigint('clear_seq', { mode: 'number' }).notNull().default(0),
    /** Read cursor; only ever moves forward. */
    readSeq: bigint('read_seq', { mode: 'number' }).notNull().default(0),
    /** The conversation's `max_seq` when this member joined: their floor while the group is 'since_joined'. */
    joinedSeq: bigint('joined_seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.userId] }),
    check('members_role_check', sql`${t.role} in ('owner', 'member')`),
    // "Which conversations is this user in": search and the mentions list (the inbox reads user_inbox).
    index('members_user_idx').on(t.userId),
    // Read receipts: the read positions at or above a page's lowest seq,
    // one index-only range per conversation (see countReaders). It costs
    // mark-read its HOT updates: read_seq is now an indexed column.
    index('members_read_seq_idx').on(t.convId, t.readSeq),
    // The member list in join order: a page of 100 reads 100 entries,
    // whatever the size of the group (see listMembers).
    index('members_join_order_idx').on(t.convId, t.joinedMillis, t.userId).where(listedInJoinOrder(t.joinedAt)),
  ],
);

/**
 * The inbox index: one row per membership, keyed by user, so a member's
 * conversations in activity order are one index range however many they
 * are in (reading every membership to sort them took 230-290 ms for a
 * member of 50,000 conversations). `activity_at` is the conversation's
 * `last_activity_at`, written in the same statement as every change that
 * moves it (a send, src/store/sends.ts) or adds the membership
 * (src/store/inboxIndex.ts). Null means "read it from the conversation":
 * for a large conversation (`conversations.large`), so a send to 10,000
 * members writes no 10,000 rows, and for a member who joined an existing
 * group, until its next send (src/store/inboxIndex.ts says why).
 *
 * User-scoped, unlike the tables above: distributed (or partitioned) by
 * `user_id`, and every statement on it names the user ids it touches.
 */
export const userInbox = pgTable(
  'user_inbox',
  {
    userId: text('user_id').notNull(),
    convId: uuid('conv_id').notNull(),
    /** The conversation's `last_activity_at`; null: read it from the conversation. */
    activityAt: timestamp('activity_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.convId] }),
    // An inbox page: the newest entries (or those after a cursor) of one user.
    index('user_inbox_order_idx').on(t.userId, t.activityAt, t.convId).where(sql`${t.activityAt} is not null`),
    // The few entries of one user read from their conversations, merged in at read time.
    index('user_inbox_read_time_idx').on(t.userId, t.convId).where(sql`${t.activityAt} is null`),
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
    /** Set when the sender's data was erased (`eraseUser`): the body is gone, the seq stays. */
    erasedAt: timestamp('erased_at', { withTimezone: true }),
    /** When the text was last edited (`editMessage`); null: never. Earlier versions are in `message_edits`. */
    editedAt: timestamp('edited_at', { withTimezone: true }),
    /** The message of this conversation it replies to; null: not a reply. */
    replyToSeq: bigint('reply_to_seq', { mode: 'number' }),
    /** The root of the thread it belongs to (threads are one level deep); null on a message that is not a reply. */
    threadRootSeq: bigint('thread_root_seq', { mode: 'number' }),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.seq] }),
    // A thread in seq order, and its reply count: one range per root.
    index('messages_thread_idx').on(t.convId, t.threadRootSeq, t.seq).where(sql`${t.threadRootSeq} is not null`),
    // Jump to a date, and the retention cut-off by time: one probe each.
    index('messages_created_idx').on(t.convId, t.createdAt, t.seq),
    // Idempotent sends: a retry with the same client id finds the first copy.
    uniqueIndex('messages_client_msg_id_idx').on(t.convId, t.senderId, t.clientMsgId),
  ],
);

/** A PostgreSQL `tsvector`, written as the literal src/history/searchText.ts makes. */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * Bodies, and their search index: `search_terms` lives on the body row, so
 * every path that deletes a body (revoke, purge, erasure, the retention
 * purge) removes its index entry in the same statement.
 */
export const messageBodies = pgTable(
  'message_bodies',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    text: text('text').notNull(),
    /**
     * The text's lexemes and the conversation's scope lexeme (see
     * src/history/searchText.ts); written by the send statement. Null: not
     * indexed yet (rows from before search; `backscroll reindex-search`).
     */
    searchTerms: tsvector('search_terms'),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.seq] }),
    // One GIN index answers "these words in this conversation": the scope
    // lexeme is ANDed into each query, so it stays per conversation.
    // fastupdate off: each send's lexemes go into the index itself, not a
    // pending list that every index scan reads whole until a vacuum (or 4 MB
    // of sends) flushes it. A search makes up to one scan per conversation:
    // after the bench's sends, 334 pending pages made each search 120-300 ms
    // instead of 25-40.
    index('message_bodies_search_idx').using('gin', t.searchTerms).with({ fastupdate: false }),
  ],
);

/**
 * Earlier versions of edited messages: `version` 1 is the text as sent, each
 * edit adds the version it replaced, with `edited_at` the time it was
 * replaced. Every path that deletes a message's text deletes these with it
 * in the same statement (revoke, purges, erasure, retention).
 */
export const messageEdits = pgTable(
  'message_edits',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    version: integer('version').notNull(),
    text: text('text').notNull(),
    /** When this version was replaced by the next. */
    editedAt: timestamp('edited_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.convId, t.seq, t.version] })],
);

/**
 * Reactions: one row per (message, reaction, user). A message's groups are
 * read for a whole page in one statement, ordered by each reaction's first
 * use (`created_at`).
 */
export const messageReactions = pgTable(
  'message_reactions',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    reaction: text('reaction').notNull(),
    userId: text('user_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.seq, t.reaction, t.userId] }),
    // Erasure removes a user's reactions everywhere.
    index('message_reactions_user_idx').on(t.userId),
  ],
);

/**
 * Messages a user starred, private to them. Keyed by the message, like every
 * conversation-scoped table; the viewer's list reads the user index (newest
 * first), as the inbox reads `members_user_idx`.
 */
export const messageStars = pgTable(
  'message_stars',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    userId: text('user_id').notNull(),
    starredAt: timestamp('starred_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.convId, t.seq, t.userId] }), index('message_stars_user_idx').on(t.userId, t.starredAt, t.convId, t.seq)],
);

/**
 * Who a message mentions, written by its send and never changed. A row with
 * `user_id` '' (which no user id can be: src/history/userId.ts) mentions
 * everyone: one row per message, not one per member, so a group of any size
 * costs the same and members who join later see it too. `sent_at` is the
 * message's `created_at`, so one user's mentions are in time order in
 * `message_mentions_user_time_idx`; `message_mentions_user_conv_idx` serves
 * "this user's (or everyone's) mentions in this conversation above a seq",
 * the unread mention count and the everyone-mentions of the viewer's list.
 */
export const messageMentions = pgTable(
  'message_mentions',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    userId: text('user_id').notNull(),
    /** Where the sender put this id among the ones they gave (1 first); everyone's row is 0. */
    position: integer('position').notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.seq, t.userId] }),
    index('message_mentions_user_time_idx').on(t.userId, t.sentAt, t.convId, t.seq),
    index('message_mentions_user_conv_idx').on(t.userId, t.convId, t.seq),
  ],
);

/**
 * Pinned messages, at most 50 per conversation (src/history/pins.ts). Every
 * member sees the same pins, through their own views.
 */
export const messagePins = pgTable(
  'message_pins',
  {
    convId: uuid('conv_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    pinnedBy: text('pinned_by').notNull(),
    pinnedAt: timestamp('pinned_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // The list, most recently pinned first: one range of one conversation.
  (t) => [primaryKey({ columns: [t.convId, t.seq] }), index('message_pins_order_idx').on(t.convId, t.pinnedAt, t.seq)],
);

/** How far a member has read one thread (`markThreadRead`): replies at or below `read_seq` are read. */
export const threadReads = pgTable(
  'thread_reads',
  {
    convId: uuid('conv_id').notNull(),
    rootSeq: bigint('root_seq', { mode: 'number' }).notNull(),
    userId: text('user_id').notNull(),
    readSeq: bigint('read_seq', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.convId, t.rootSeq, t.userId] })],
);

/**
 * The old "deleted for me" table, a row per (member, message): emptied into
 * `message_hide_ranges` by migration 0009 and written by nothing. Only
 * `purgeMessages` (src/store/lifecycle.ts) still deletes from it; drop it
 * once that no longer does.
 */
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

/**
 * "Deleted for me" as ranges: member `user_id` has hidden every message of
 * `conv_id` from `from_seq` to `to_seq`, both included, never an array on
 * the message nor a row per message. A member's ranges never overlap, and
 * hides merge into their neighbours (src/store/hides.ts), so a page skips
 * whatever a member hid in a few index seeks (see `visibleRun` in
 * src/store/sqlFragments.ts). Seqs inside a range with no message (purged)
 * are gaps either way, and no message is ever written into a range: new
 * messages take seqs above `max_seq`.
 */
export const messageHideRanges = pgTable(
  'message_hide_ranges',
  {
    convId: uuid('conv_id').notNull(),
    userId: text('user_id').notNull(),
    fromSeq: bigint('from_seq', { mode: 'number' }).notNull(),
    toSeq: bigint('to_seq', { mode: 'number' }).notNull(),
  },
  (t) => [
    // "The range nearest below (or above) seq s" is one probe of this key.
    primaryKey({ columns: [t.convId, t.userId, t.fromSeq] }),
    check('message_hide_ranges_order_check', sql`${t.fromSeq} <= ${t.toSeq}`),
  ],
);

/**
 * The cold archive's segments (src/archive/): each holds the bodies of one
 * conversation's seqs `from_seq` to `to_seq` (`count` of them: a seq whose
 * body was already gone is not in it) in the object `key` of the segment
 * store. A row exists only once its object was written and read back, and
 * is inserted in the transaction that deletes those warm bodies. Segments
 * of one conversation never overlap, so the one with the greatest
 * `from_seq` at or below a seq is the only one that can hold it: one probe
 * of the primary key.
 */
export const archiveSegments = pgTable(
  'archive_segments',
  {
    convId: uuid('conv_id').notNull(),
    fromSeq: bigint('from_seq', { mode: 'number' }).notNull(),
    toSeq: bigint('to_seq', { mode: 'number' }).notNull(),
    /** The object's key in the segment store. */
    key: text('key').notNull(),
    /** The object's size. */
    bytes: integer('bytes').notNull(),
    /** sha256 (hex) of the segment's header fields and compressed content, as its header states it. */
    checksum: text('checksum').notNull(),
    count: integer('count').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.fromSeq] }),
    check('archive_segments_range_check', sql`${t.fromSeq} <= ${t.toSeq} and ${t.count} between 1 and ${t.toSeq} - ${t.fromSeq} + 1`),
  ],
);

/**
 * The change feed (`Conversation.changes`): what happened to messages a
 * client may hold. `user_id` set: only that member sees the entry (hides,
 * clears). Entries are numbered per conversation by `conversations.change_seq`.
 */
export const conversationChanges = pgTable(
  'conversation_changes',
  {
    convId: uuid('conv_id').notNull(),
    changeSeq: bigint('change_seq', { mode: 'number' }).notNull(),
    /** 'revoked' | 'purged' | 'hidden' | 'history_cleared' | 'retention_changed' | 'erased' | 'edited' | 'reactions_changed' | 'thread_read' | 'starred' | 'unstarred' | 'pinned' | 'unpinned'. */
    kind: text('kind').notNull(),
    fromSeq: bigint('from_seq', { mode: 'number' }).notNull(),
    toSeq: bigint('to_seq', { mode: 'number' }).notNull(),
    /** The only member who sees this entry; null: everyone. */
    userId: text('user_id'),
    /** 'erased': whose messages. */
    subjectId: text('subject_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.convId, t.changeSeq] }),
    check(
      'conversation_changes_kind_check',
      sql`${t.kind} in ('revoked', 'purged', 'hidden', 'history_cleared', 'retention_changed', 'erased', 'edited', 'reactions_changed', 'thread_read', 'starred', 'unstarred', 'pinned', 'unpinned')`,
    ),
    // Pruning old entries.
    index('conversation_changes_created_idx').on(t.createdAt),
  ],
);

/** Announcements to every user: one row each, however many users there are. */
export const announcements = pgTable('announcements', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  title: text('title').notNull(),
  text: text('text').notNull(),
  publishedBy: text('published_by').notNull(),
  publishedAt: timestamp('published_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Per user, one "read up to" instant: announcements published after it are unread (read fan-out). */
export const announcementReads = pgTable('announcement_reads', {
  userId: text('user_id').primaryKey(),
  readUpTo: timestamp('read_up_to', { withTimezone: true }).notNull(),
});

/**
 * Rate-limit counters shared by every server process on one PostgreSQL
 * (rate-limiter-flexible's Drizzle store: a fixed window per key). Keys are
 * `<limit>:<user>`; expired rows are deleted by the limiter itself.
 */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  points: integer('points').notNull(),
  expire: timestamp('expire', { withTimezone: true, mode: 'date' }),
});

/**
 * Open WebSocket connections, so the sockets-per-user limit holds across
 * server processes. Each process renews its own rows while it lives; rows of
 * a process that died without closing them lapse at `expires_at`.
 */
export const socketLeases = pgTable(
  'socket_leases',
  {
    socketId: uuid('socket_id').primaryKey(),
    userId: text('user_id').notNull(),
    /** The process holding the socket (a random id per process start). */
    serverId: text('server_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('socket_leases_user').on(t.userId, t.expiresAt), index('socket_leases_server').on(t.serverId)],
);
