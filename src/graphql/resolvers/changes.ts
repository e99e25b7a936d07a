/** `ChangeConnection` and `MessageChange`: the change feed as the API shows it. */
import { encodeChangeCursor } from '../../history/cursor.ts';
import type { ChangeConnectionResolvers, MessageChangeKind, MessageChangeResolvers } from '../generated/resolvers.ts';
import type { ChangeKind } from '../../store/changes.ts';
import { viewerOf } from '../context.ts';

const KIND: Record<ChangeKind, MessageChangeKind> = {
  revoked: 'REVOKED',
  purged: 'PURGED',
  hidden: 'HIDDEN',
  history_cleared: 'HISTORY_CLEARED',
  retention_changed: 'RETENTION_CHANGED',
  erased: 'ERASED',
  edited: 'EDITED',
  reactions_changed: 'REACTIONS_CHANGED',
  thread_read: 'THREAD_READ',
  starred: 'STARRED',
  unstarred: 'UNSTARRED',
  pinned: 'PINNED',
  unpinned: 'UNPINNED',
};

/** The kinds whose entry names one message a client should replace its copy of. */
const CARRIES_MESSAGE = new Set<ChangeKind>(['revoked', 'edited', 'reactions_changed', 'thread_read', 'starred', 'unstarred', 'pinned', 'unpinned']);

export const ChangeConnection: ChangeConnectionResolvers = {
  changes: (page) => page.changes,
  cursor: (page) => encodeChangeCursor(page.convId, page.cursorChangeSeq),
  hasMore: (page) => page.hasMore,
  goneThroughSeq: (page) => page.goneThroughSeq,
};

export const MessageChange: MessageChangeResolvers = {
  kind: (change) => KIND[change.kind],
  fromSeq: (change) => change.fromSeq,
  toSeq: (change) => change.toSeq,
  user: (change) => (change.subjectId === null ? null : { id: change.subjectId }),
  at: (change) => change.at,
  // Through the request's loader: a page of changes costs one lookup statement.
  message: (change, _args, context) =>
    CARRIES_MESSAGE.has(change.kind) ? viewerOf(context).loaders.message.load({ convId: change.convId, seq: change.fromSeq }) : null,
};
