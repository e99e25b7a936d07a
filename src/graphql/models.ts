/**
 * What each GraphQL object type resolves from (codegen's `mappers`): the
 * store's rows, plus the few shapes that exist only in the API.
 */
import type { PageCut } from '../history/pageCut.ts';
import type { PageSlice } from '../history/pageSlice.ts';
import type { SeqRange } from '../history/pageSpan.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import type { SearchQuery } from '../history/searchText.ts';
import type { SearchHit } from '../search/backend.ts';
import type { ChangeRow } from '../store/changes.ts';
import type { EditRow } from '../store/edits.ts';
import type { ReactionGroupRow } from '../store/reactions.ts';
import type { StarredRow } from '../store/stars.ts';
import type { MentionRow } from '../store/mentions.ts';
import type { PinRow } from '../store/pins.ts';
import type { ConversationRow, MessageRow } from '../store/rows.ts';
import type { KeysetEdgeModel } from './keysetEdges.ts';

/**
 * A conversation as the viewer sees it, or only its id when the request
 * asks for nothing but its pages: the page statement checks membership
 * itself, so reading the row first would be a wasted statement.
 * Resolvers read the row through `conversationRow`.
 */
export type ConversationModel = ConversationRow | ConversationRef;
interface ConversationRef {
  id: string;
  /** Membership not checked yet; every field that reads past `id` must check it. */
  unchecked: true;
}
export type MessageModel = MessageRow;
/** A message edge: its row as `node`, and the cursor made from it when asked (messageEdges.ts). */
export type { MessageEdgeModel as EdgeModel } from './messageEdges.ts';
export interface UserModel {
  id: string;
}

/** A page and what the connection reports about it. */
export interface ConnectionModel {
  convId: string;
  slice: PageSlice<MessageRow>;
  latestSeq: number;
  /** Set by `messagesAround` and `messagesAt` only. */
  anchor: { seq: number; found: boolean } | null;
  /** The position of the cursor the page was asked from (`after`/`before`), if any. */
  requestSeq: number | null;
  /** The seqs this page accounts for (see src/history/pageSpan.ts). */
  span: SeqRange | null;
  /** The change-feed position read in the page's snapshot. */
  changeSeq: number;
  /** `messages(aroundFirstUnread: true)` only: the first unread message's seq (null: nothing unread, or another kind of page). */
  firstUnreadSeq?: number | null;
  /** Where the page was cut short because archived bodies could not be read, and why; null when it was not. */
  cut: { at: PageCut; reason: 'ARCHIVE_TIMEOUT' | 'ARCHIVE_UNAVAILABLE' } | null;
}
/** Where a page sits; every connection computes its own. */
export interface PageInfoModel {
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/** The caller. */
export interface ViewerModel {
  id: string;
}

/**
 * A keyset page of anything: the rows (at most the page size), whether more
 * follow, and how to make an edge's cursor. Inbox, members and announcements
 * pages all have this shape.
 */
export interface KeysetPage<Row> {
  rows: Row[];
  hasNextPage: boolean;
  /** Whether the page was asked for with a cursor (so something lies before it). */
  hasPreviousPage: boolean;
  cursorOf(row: Row): string;
}

export type ConversationConnectionModel = KeysetPage<ConversationRow>;
export type ConversationEdgeModel = KeysetEdgeModel<ConversationRow>;

/**
 * One membership as the API shows it, every field a property so a list of
 * 100 members calls no resolver per member (keysetEdges.ts says why).
 */
export interface MemberModel {
  user: UserModel;
  role: 'OWNER' | 'MEMBER';
  /** ISO 8601, UTC. */
  joinedAt: string;
  /** Not in the schema: the join time as the member's cursor spells it (MemberRow). */
  joinedMillis: number;
  readSeq: number;
}
export type MemberConnectionModel = KeysetPage<MemberModel>;
export type MemberEdgeModel = KeysetEdgeModel<MemberModel>;

export interface AnnouncementModel {
  id: number;
  title: string;
  text: string;
  /** ISO 8601, UTC. */
  publishedAt: string;
  unread: boolean;
}
export type AnnouncementConnectionModel = KeysetPage<AnnouncementModel>;
export type AnnouncementEdgeModel = KeysetEdgeModel<AnnouncementModel>;

/** A live event, already checked against the subscriber's membership. */
export interface ConversationEventModel {
  kind: 'MESSAGE_SENT' | 'MESSAGE_REVOKED' | 'MESSAGE_EDITED' | 'REACTIONS_CHANGED' | 'MESSAGE_PINNED' | 'MESSAGE_UNPINNED' | 'MESSAGES_PURGED' | 'READ_MOVED';
  convId: string;
  seq: number;
  toSeq: number;
  /** The message as the subscriber sees it (sent, revoked, edited, reactions changed, pinned, unpinned), or null. */
  message: MessageRow | null;
  /** READ_MOVED: whose cursor. */
  userId: string | null;
}

export interface AddMembersPayloadModel {
  conversation: ConversationRow;
  addedCount: number;
}

export interface PublishAnnouncementPayloadModel {
  announcement: AnnouncementModel;
}

export interface TextContentModel {
  __typename: 'TextContent';
  text: string;
}
export interface RevokedContentModel {
  __typename: 'RevokedContent';
  revokedAt: string;
  revokedBy: string;
}

export interface PurgedContentModel {
  __typename: 'PurgedContent';
  purgedAt: string;
}

/** The policy in force and where it cuts right now. */
export interface RetentionPolicyModel extends RetentionPolicy {
  expiredThroughSeq: number;
}

/** A page of the change feed, ready to answer. */
export interface ChangeConnectionModel {
  convId: string;
  changes: MessageChangeModel[];
  /** The entry number the next call continues after. */
  cursorChangeSeq: number;
  hasMore: boolean;
  goneThroughSeq: number;
}
/** A change-feed entry and the conversation it is in (its `message` is loaded from there). */
export interface MessageChangeModel extends ChangeRow {
  convId: string;
}

/** A page of a message's earlier versions, newest first. */
export type MessageEditModel = EditRow;
export type MessageEditConnectionModel = KeysetPage<EditRow>;
export type MessageEditEdgeModel = KeysetEdgeModel<EditRow>;

/** A page of a thread: its replies in ascending seq order with exact flags. */
export interface ThreadConnectionModel {
  convId: string;
  slice: PageSlice<MessageRow>;
  /** The position of the cursor the page was asked from (`after`/`before`), if any: an empty page's cursors. */
  requestSeq: number | null;
}

/** One reaction on a message as the viewer sees it. */
export type ReactionGroupModel = ReactionGroupRow;
export type UserConnectionModel = KeysetPage<UserModel>;
export type UserEdgeModel = KeysetEdgeModel<UserModel>;

/** A page of the viewer's starred messages. */
export type StarredMessageConnectionModel = KeysetPage<StarredRow>;
export type StarredMessageEdgeModel = KeysetEdgeModel<StarredRow>;

/** A page of a conversation's pins. */
export type PinnedMessageConnectionModel = KeysetPage<PinRow>;
export type PinnedMessageEdgeModel = KeysetEdgeModel<PinRow>;

/** A page of the messages that mention the viewer. */
export type MentionConnectionModel = KeysetPage<MentionRow>;
export type MentionEdgeModel = KeysetEdgeModel<MentionRow>;

export interface PinPayloadModel {
  message: MessageRow;
  conversation: ConversationRow;
}

export interface ConversationPayloadModel {
  conversation: ConversationRow;
}
export interface ClearHistoryPayloadModel {
  conversation: ConversationRow;
  clearedThroughSeq: number;
}

/** A search hit and the search it answers (the snippet needs the query's words; null: a search by filter alone). */
export interface SearchHitModel {
  hit: SearchHit;
  query: SearchQuery | null;
}
export type MessageSearchConnectionModel = KeysetPage<SearchHitModel>;
export type MessageSearchEdgeModel = KeysetEdgeModel<SearchHitModel>;
