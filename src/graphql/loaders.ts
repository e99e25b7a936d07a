/**
 * Per-request DataLoaders: every lookup a page makes per edge (bodies, the
 * message's conversation) goes through one of these, so a page costs one
 * batched statement per kind, whatever its size. Create one set per request:
 * they cache what this viewer may see. Each store batch function answers an
 * array in key order, as DataLoader expects, so a loader only records its
 * batch and passes the answer on.
 */
import DataLoader from 'dataloader';
import type { SqlRunner } from '../db/runner.ts';
import type { UnreadCount } from '../history/unreadCount.ts';
import { findMemberConversations } from '../store/conversations.ts';
import { countReaders, countUnread, countUnreadMentions, findFirstUnreads, findLastMessages } from '../store/inbox.ts';
import { findMentions, type MessageMentions } from '../store/mentions.ts';
import { findMessageBodies, findVisibleMessages, type MessageBody, type MessageKey, messageKeyString } from '../store/messages.ts';
import type { ConversationRow, MessageRow } from '../store/rows.ts';
import type { RetentionClock } from '../store/sqlFragments.ts';
import { type EditRow, type EditsRequest, findEdits } from '../store/edits.ts';
import { findReactionGroups, findReactors, type ReactionGroupRow, type ReactorRow, type ReactorsRequest } from '../store/reactions.ts';
import { countThreads, type ThreadCounts } from '../store/threads.ts';
import { findStarredByMe } from '../store/stars.ts';

/** One batch a loader ran: which loader and how many keys. */
export interface LoaderBatch {
  loader: 'conversation' | 'message' | 'body' | 'lastMessage' | 'firstUnread' | 'unread' | 'readCount' | 'edits' | 'reactions' | 'reactors' | 'threads' | 'starred' | 'mentions' | 'unreadMentions';
  size: number;
}

export interface Loaders {
  /** The viewer's conversations by uuid; null when not a member. */
  conversation: DataLoader<string, ConversationRow | null>;
  /** Messages the viewer may see, by key; null otherwise. */
  message: DataLoader<MessageKey, MessageRow | null, string>;
  /** What a message shows. Only load keys the viewer may see. */
  body: DataLoader<MessageKey, MessageBody, string>;
  /** The newest message the viewer can see in a conversation, by uuid; null when none (or not a member). */
  lastMessage: DataLoader<string, MessageRow | null>;
  /** The oldest message from others the viewer can see after their read cursor, by conversation uuid; null when none (or not a member). */
  firstUnread: DataLoader<string, MessageRow | null>;
  /** The viewer's unread count in a conversation, by uuid (nothing unread when not a member). */
  unread: DataLoader<string, UnreadCount>;
  /** Read receipts: how many members other than the sender have read a message. Only load keys the viewer may see. */
  readCount: DataLoader<MessageKey, number, string>;
  /** A page of a message's earlier versions. Only load messages the viewer may see. */
  edits: DataLoader<EditsRequest, EditRow[], string>;
  /** A message's reactions as the viewer sees them. Only load keys the viewer may see. */
  reactions: DataLoader<MessageKey, ReactionGroupRow[], string>;
  /** A page of one reaction's users. Only load messages the viewer may see. */
  reactors: DataLoader<ReactorsRequest, ReactorRow[], string>;
  /** A root's visible replies and the viewer's unread ones in its thread. Only load keys the viewer may see. */
  threads: DataLoader<MessageKey, ThreadCounts, string>;
  /** Whether the viewer starred a message, by key. */
  starred: DataLoader<MessageKey, boolean, string>;
  /** Who a message mentions. Only load keys the viewer may see. */
  mentions: DataLoader<MessageKey, MessageMentions, string>;
  /** The viewer's unread mentions in a conversation (at most 99), by uuid (0 when not a member). */
  unreadMentions: DataLoader<string, number>;
}

/** What every loader of one request reads with. */
interface LoaderScope {
  db: SqlRunner;
  viewerId: string;
  retention: RetentionClock;
  batches: LoaderBatch[];
}

/** `find`, recording each batch it runs as `loader`'s. */
const recorded =
  <Key, Value>(scope: LoaderScope, loader: LoaderBatch['loader'], find: (keys: readonly Key[]) => Promise<Value[]>) =>
  (keys: readonly Key[]) => {
    scope.batches.push({ loader, size: keys.length });
    return find(keys);
  };

const byMessageKey = { cacheKeyFn: messageKeyString };

/** How each loader is made, once per module: a set of loaders is made per subscriber per live event, so it must cost one object, not fourteen closures. */
const makers: { [Name in keyof Loaders]: (s: LoaderScope) => Loaders[Name] } = {
  conversation: (s) => new DataLoader(recorded(s, 'conversation', (ids: readonly string[]) => findMemberConversations(s.db, s.viewerId, s.retention, ids))),
  message: (s) => new DataLoader(recorded(s, 'message', (keys: readonly MessageKey[]) => findVisibleMessages(s.db, s.viewerId, s.retention, keys)), byMessageKey),
  body: (s) => new DataLoader(recorded(s, 'body', (keys: readonly MessageKey[]) => findMessageBodies(s.db, keys)), byMessageKey),
  lastMessage: (s) => new DataLoader(recorded(s, 'lastMessage', (ids: readonly string[]) => findLastMessages(s.db, s.viewerId, s.retention, ids))),
  firstUnread: (s) => new DataLoader(recorded(s, 'firstUnread', (ids: readonly string[]) => findFirstUnreads(s.db, s.viewerId, s.retention, ids))),
  unread: (s) => new DataLoader(recorded(s, 'unread', (ids: readonly string[]) => countUnread(s.db, s.viewerId, s.retention, ids))),
  readCount: (s) => new DataLoader(recorded(s, 'readCount', (keys: readonly MessageKey[]) => countReaders(s.db, keys)), byMessageKey),
  edits: (s) =>
    new DataLoader(recorded(s, 'edits', (requests: readonly EditsRequest[]) => findEdits(s.db, requests)), {
      cacheKeyFn: (r) => `${messageKeyString(r)}:${r.beforeVersion}:${r.limit}`,
    }),
  reactions: (s) => new DataLoader(recorded(s, 'reactions', (keys: readonly MessageKey[]) => findReactionGroups(s.db, s.viewerId, keys)), byMessageKey),
  reactors: (s) =>
    new DataLoader(recorded(s, 'reactors', (requests: readonly ReactorsRequest[]) => findReactors(s.db, requests)), {
      cacheKeyFn: (r) => JSON.stringify([messageKeyString(r), r.reaction, r.after, r.limit]),
    }),
  starred: (s) => new DataLoader(recorded(s, 'starred', (keys: readonly MessageKey[]) => findStarredByMe(s.db, s.viewerId, keys)), byMessageKey),
  mentions: (s) => new DataLoader(recorded(s, 'mentions', (keys: readonly MessageKey[]) => findMentions(s.db, keys)), byMessageKey),
  unreadMentions: (s) => new DataLoader(recorded(s, 'unreadMentions', (ids: readonly string[]) => countUnreadMentions(s.db, s.viewerId, s.retention, ids))),
  threads: (s) => new DataLoader(recorded(s, 'threads', (keys: readonly MessageKey[]) => countThreads(s.db, s.viewerId, s.retention, keys)), byMessageKey),
};

/** One request's loaders: each made on first use, by getters on the prototype (defined below). */
class LazyLoaders {
  constructor(
    readonly scope: LoaderScope,
    readonly made: Partial<Loaders>,
  ) {}
}
for (const name of Object.keys(makers) as (keyof Loaders)[]) {
  Object.defineProperty(LazyLoaders.prototype, name, {
    get(this: LazyLoaders) {
      return (this.made[name] ??= makers[name](this.scope) as never);
    },
  });
}

/**
 * Makes the loaders for one request by `viewerId`; `batches` records each
 * batch. Each loader is made when first used: a page uses a few of the fourteen,
 * and a live event (one set per subscriber per event) often none but the
 * shared `body` it passes in `given`.
 */
export function createLoaders(db: SqlRunner, viewerId: string, retention: RetentionClock, batches: LoaderBatch[], given: Partial<Loaders> = {}): Loaders {
  return new LazyLoaders({ db, viewerId, retention, batches }, { ...given }) as unknown as Loaders;
}
