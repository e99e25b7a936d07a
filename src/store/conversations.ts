/**
 * Conversations and memberships: creating groups, opening direct
 * conversations, reading them as one member sees them, and the member's own
 * watermarks (clear history, read cursor).
 */
import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { notifyExpression } from './notify.ts';
import { directConversationId } from '../history/directConversation.ts';
import { inKeyOrder } from './batch.ts';
import { recordChanges } from './changes.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import type { ConversationRow } from './rows.ts';
import { expiredThrough, isoTime, type RetentionClock } from './sqlFragments.ts';

/** A conversation row as `conversationColumns` selects it, before `toConversationRow`. */
export interface RawConversationRow {
  id: string;
  kind: 'direct' | 'group';
  title: string | null;
  max_seq: number;
  role: 'owner' | 'member';
  read_seq: number;
  clear_seq: number;
  retention_days: number | null;
  retention_max_messages: number | null;
  expired_through: number;
  history_visibility: 'shared' | 'since_joined';
  last_activity_at: string;
}

/** Maps a raw row selected with `conversationColumns` to a `ConversationRow`. */
export const toConversationRow = (r: RawConversationRow): ConversationRow => ({
  id: r.id,
  kind: r.kind,
  title: r.title,
  maxSeq: r.max_seq,
  role: r.role,
  readSeq: r.read_seq,
  clearSeq: r.clear_seq,
  ownRetention: { days: r.retention_days, maxMessages: r.retention_max_messages },
  expiredThroughSeq: r.expired_through,
  historyVisibility: r.history_visibility,
  lastActivityAt: r.last_activity_at,
});

/**
 * The columns of a `ConversationRow`, from `members mb` joined to
 * `conversations c`; every statement that hands out conversation rows (the
 * lookup by id, the inbox) selects these, so the rows agree field for field.
 */
export function conversationColumns(retention: RetentionClock): SQL {
  return sql`c.id, c.kind, c.title, c.max_seq, mb.role, mb.read_seq, mb.clear_seq,
        c.retention_days, c.retention_max_messages, ${expiredThrough('c', retention)} as expired_through, c.history_visibility,
        ${isoTime('c.last_activity_at')} as last_activity_at`;
}

/** For each of `convIds`, in order, the conversation if `viewerId` is a member of it; null otherwise. */
export async function findMemberConversations(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<(ConversationRow | null)[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<RawConversationRow>(sql`select ${conversationColumns(retention)}
      from members mb join conversations c on c.id = mb.conv_id
      where mb.user_id = ${viewerId} and mb.conv_id = any(${sql.param([...convIds])}::uuid[])`);
  return inKeyOrder(convIds, rows.map(toConversationRow), (id) => id, (row) => row.id);
}

/** Inserts members of `convId` from parallel arrays of user ids and roles, skipping ones already there. */
function insertMembers(convId: string, userIds: string[], roles: string[]) {
  return sql`insert into members (conv_id, user_id, role)
    select ${convId}, u.user_id, u.role from unnest(${sql.param(userIds)}::text[], ${sql.param(roles)}::text[]) as u(user_id, role)
    on conflict do nothing`;
}

/** Creates a group owned by `ownerId` with the other members; returns its id. */
export async function createGroup(
  db: SqlRunner,
  ownerId: string,
  title: string | null,
  memberIds: readonly string[],
  historyVisibility: 'shared' | 'since_joined' = 'shared',
): Promise<string> {
  const id = randomUUID();
  const others = [...new Set(memberIds)].filter((m) => m !== ownerId);
  await db.transaction(async (tx) => {
    await tx.rows(sql`insert into conversations (id, kind, title, history_visibility) values (${id}, 'group', ${title}, ${historyVisibility})`);
    await tx.rows(insertMembers(id, [ownerId, ...others], ['owner', ...others.map(() => 'member')]));
  });
  return id;
}

/** Opens (creating on first use) the direct conversation of `a` and `b`; returns its id. */
export async function openDirect(db: SqlRunner, a: string, b: string): Promise<string> {
  const id = directConversationId(a, b);
  const users = [...new Set([a, b])];
  await db.transaction(async (tx) => {
    await tx.rows(sql`insert into conversations (id, kind) values (${id}, 'direct') on conflict do nothing`);
    await tx.rows(insertMembers(id, users, users.map(() => 'member')));
  });
  return id;
}

/** What `clearHistory` did. */
export type ClearOutcome = { kind: 'cleared'; throughSeq: number } | NotFound;

/**
 * Moves the member's clear watermark up to the conversation's current
 * `max_seq`, and answers the new watermark.
 */
export async function clearHistory(db: SqlRunner, viewerId: string, convId: string): Promise<ClearOutcome> {
  return db.transaction(async (tx): Promise<ClearOutcome> => {
    const rows = await tx.rows<{ clear_seq: number }>(sql`update members mb set clear_seq = greatest(mb.clear_seq, c.max_seq)
        from conversations c
        where c.id = mb.conv_id and mb.conv_id = ${convId} and mb.user_id = ${viewerId}
        returning mb.clear_seq`);
    const through = rows[0]?.clear_seq;
    if (through === undefined) return NOT_FOUND;
    await recordChanges(tx, [{ convId, kind: 'history_cleared', fromSeq: 1, toSeq: through, userId: viewerId, subjectId: null }]);
    return { kind: 'cleared', throughSeq: through };
  });
}

/** What `markRead` found. */
export type MarkReadOutcome = { kind: 'ok'; readSeq: number } | NotFound | { kind: 'beyond-max'; maxSeq: number };

/** Moves the member's read cursor forward to `seq` (never back), in one statement. */
export async function markRead(db: SqlRunner, viewerId: string, convId: string, seq: number): Promise<MarkReadOutcome> {
  const rows = await db.rows<{ max_seq: number; read_seq: number | null }>(sql`with target as (
        select c.max_seq, mb.read_seq as old_read_seq from members mb join conversations c on c.id = mb.conv_id
        where mb.conv_id = ${convId} and mb.user_id = ${viewerId}),
      moved as (
        update members set read_seq = greatest(read_seq, ${seq})
        where conv_id = ${convId} and user_id = ${viewerId} and ${seq} <= (select max_seq from target)
        returning read_seq)
      select t.max_seq, (select read_seq from moved) as read_seq,
        -- Announced only when the cursor moved forward.
        (select ${notifyExpression({ convId, kind: 'read', seq: sql`moved.read_seq`, toSeq: sql`moved.read_seq`, userId: viewerId })}
          from moved where moved.read_seq > t.old_read_seq) as notified
      from target t`);
  const row = rows[0];
  if (row === undefined) return NOT_FOUND;
  if (row.read_seq === null) return { kind: 'beyond-max', maxSeq: row.max_seq };
  return { kind: 'ok', readSeq: row.read_seq };
}
