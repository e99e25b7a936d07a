/** `ChangeConnection` and `MessageChange`: the change feed as the API shows it. */
import { encodeChangeCursor } from '../../history/cursor.ts';
import type { ChangeConnectionResolvers, MessageChangeKind, MessageChangeResolvers } from '../generated/resolvers.ts';
import type { ChangeKind } from '../../store/changes.ts';

const KIND: Record<ChangeKind, MessageChangeKind> = {
  revoked: 'REVOKED',
  purged: 'PURGED',
  hidden: 'HIDDEN',
  history_cleared: 'HISTORY_CLEARED',
  retention_changed: 'RETENTION_CHANGED',
  erased: 'ERASED',
};

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
};
