/**
 * Per-request DataLoaders: every lookup a page makes per edge (bodies, the
 * message's conversation) goes through one of these, so a page costs one
 * batched statement per kind, whatever its size. Create one set per request:
 * they cache what this viewer may see.
 */
import DataLoader from 'dataloader';
import type { SqlRunner } from '../db/runner.ts';
import { unreadCountOf, type UnreadCount } from '../history/unreadCount.ts';
import { findMemberConversations } from '../store/conversations.ts';
import { countReaders, countUnread, findLastMessages } from '../store/inbox.ts';
import { findMessageBodies, findVisibleMessages, type MessageBody, type MessageKey } from '../store/messages.ts';
import type { ConversationRow, MessageRow } from '../store/rows.ts';
import type { RetentionClock } from '../store/sqlFragments.ts';

/** One batch a loader ran: which loader and how many keys. */
export interface LoaderBatch {
  loader: 'conversation' | 'message' | 'body' | 'lastMessage' | 'unread' | 'readCount';
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
  /** The viewer's unread count in a conversation, by uuid (nothing unread when not a member). */
  unread: DataLoader<string, UnreadCount>;
  /** Read receipts: how many members other than the sender have read a message. Only load keys the viewer may see. */
  readCount: DataLoader<MessageKey, number, string>;
}

const keyOf = (key: MessageKey): string => `${key.convId}:${key.seq}`;

/** Makes the loaders for one request by `viewerId`; `batches` records each batch. */
export function createLoaders(db: SqlRunner, viewerId: string, retention: RetentionClock, batches: LoaderBatch[]): Loaders {
  return {
    conversation: new DataLoader(async (ids) => {
      batches.push({ loader: 'conversation', size: ids.length });
      const rows = await findMemberConversations(db, viewerId, retention, ids);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    message: new DataLoader(
      async (keys) => {
        batches.push({ loader: 'message', size: keys.length });
        const rows = await findVisibleMessages(db, viewerId, retention, keys);
        const byKey = new Map(rows.map((r) => [keyOf(r), r]));
        return keys.map((k) => byKey.get(keyOf(k)) ?? null);
      },
      { cacheKeyFn: keyOf },
    ),
    body: new DataLoader(
      async (keys) => {
        batches.push({ loader: 'body', size: keys.length });
        return findMessageBodies(db, keys);
      },
      { cacheKeyFn: keyOf },
    ),
    lastMessage: new DataLoader(async (ids) => {
      batches.push({ loader: 'lastMessage', size: ids.length });
      const byId = await findLastMessages(db, viewerId, retention, ids);
      return ids.map((id) => byId.get(id) ?? null);
    }),
    unread: new DataLoader(async (ids) => {
      batches.push({ loader: 'unread', size: ids.length });
      const byId = await countUnread(db, viewerId, retention, ids);
      return ids.map((id) => unreadCountOf(byId.get(id) ?? 0));
    }),
    readCount: new DataLoader(
      async (keys) => {
        batches.push({ loader: 'readCount', size: keys.length });
        return countReaders(db, keys);
      },
      { cacheKeyFn: keyOf },
    ),
  };
}
