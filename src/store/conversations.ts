/**
 * Conversations and memberships: creating groups, opening direct
 * conversations, reading them as one member sees them, and the member's own
 * watermarks (clear history, read cursor).
 */
import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { directConversationId } from '../history/directConversation.ts';
import { isLargeGroup } from '../history/inboxFanout.ts';
import { inKeyOrder } from './batch.ts';
import { recordChanges } from './changes.ts';
import { indexAddedMembers } from './inboxIndex.ts';
import type { Publisher } from './notify.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type ConversationRow, type RawConversationRow, toConversationRow } from './rows.ts';
import {
  type ActorMessageValues,
  actorMessage,
  type Aliased,
  bare,
  bareList,
  expiredThrough,
  isoTime,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  selectList,
} from './sqlFragments.ts';
import { type Slots, statement } from './statement.ts';

/**
 * The columns of a `RawConversationRow`, from member row `mb` and its
 * conversation `c`; every statement that hands out conversation rows (the
 * lookup by id, the inbox) selects these, so the rows agree field for field.
 */
export function conversationColumns(c: Aliased<typeof conversations>, mb: Aliased<typeof members>, clock: Slots<RetentionValues>): SQL {
  return selectList<RawConversationRow>({
    id: c.id,
    // The check constraints name the values these take.
    kind: sql<RawConversationRow['kind']>`${c.kind}`,
    title: c.title,
    maxSeq: c.maxSeq,
    role: sql<RawConversationRow['role']>`${mb.role}`,
    readSeq: mb.readSeq,
    clearSeq: mb.clearSeq,
    retentionDays: c.retentionDays,
    retentionMaxMessages: c.retentionMaxMessages,
    expiredThrough: expiredThrough(c, clock),
    historyVisibility: sql<RawConversationRow['historyVisibility']>`${c.historyVisibility}`,
    membersMayPin: c.membersMayPin,
    lastActivityAt: isoTime(c.lastActivityAt),
  });
}

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');

const memberConversations = statement<RetentionValues & { viewerId: string; convIds: string[] }>(
  (v) => sql`select ${conversationColumns(c, mb, v)}
      from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
      where ${mb.userId} = ${v.viewerId} and ${mb.convId} = any(${v.convIds}::uuid[])`,
);

/** For each of `convIds`, in order, the conversation if `viewerId` is a member of it; null otherwise. */
export async function findMemberConversations(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convIds: readonly string[],
): Promise<(ConversationRow | null)[]> {
  if (convIds.length === 0) return [];
  const rows = await db.rows<RawConversationRow>(memberConversations({ ...retentionValues(retention), viewerId, convIds: [...convIds] }));
  return inKeyOrder(convIds, rows.map(toConversationRow), (id) => id, (row) => row.id);
}

/**
 * Inserts members of `convId` from parallel arrays of user ids and roles,
 * skipping ones already there, and their inbox rows. Only for a
 * conversation this transaction created, or whose members are all there
 * already (a direct one opened again), so no send moves its activity
 * between this statement and the commit.
 */
const insertMembers = statement<{ convId: string; userIds: string[]; roles: string[] }>(
  (v) => sql`with added as (
      insert into ${members} (${bareList(members.convId, members.userId, members.role)})
      select ${v.convId}, u.user_id, u.role from unnest(${v.userIds}::text[], ${v.roles}::text[]) as u(user_id, role)
      on conflict do nothing
      returning ${members.convId}, ${members.userId})
    ${indexAddedMembers(sql`added`, v.convId, 'known')}`,
);

const insertGroup = statement<{ id: string; title: string | null; historyVisibility: string; large: boolean }>(
  (v) => sql`insert into ${conversations} (${bareList(conversations.id, conversations.kind, conversations.title, conversations.historyVisibility, conversations.large)})
    values (${v.id}, 'group', ${v.title}, ${v.historyVisibility}, ${v.large})`,
);

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
    await tx.rows(insertGroup({ id, title, historyVisibility, large: isLargeGroup(others.length + 1) }));
    await tx.rows(insertMembers({ convId: id, userIds: [ownerId, ...others], roles: ['owner', ...others.map(() => 'member')] }));
  });
  return id;
}

const insertDirect = statement<{ id: string }>(
  (v) => sql`insert into ${conversations} (${bareList(conversations.id, conversations.kind)}) values (${v.id}, 'direct') on conflict do nothing`,
);

/** Opens (creating on first use) the direct conversation of `a` and `b`; returns its id. */
export async function openDirect(db: SqlRunner, a: string, b: string): Promise<string> {
  const id = directConversationId(a, b);
  const users = [...new Set([a, b])];
  await db.transaction(async (tx) => {
    await tx.rows(insertDirect({ id }));
    await tx.rows(insertMembers({ convId: id, userIds: users, roles: users.map(() => 'member') }));
  });
  return id;
}

/** What `clearHistory` did. */
export type ClearOutcome = { kind: 'cleared'; throughSeq: number } | NotFound;

const clearToMax = statement<{ viewerId: string; convId: string }>(
  (v) => sql`update ${members} ${mb} set ${bare(mb.clearSeq)} = greatest(${mb.clearSeq}, ${c.maxSeq})
        from ${conversations} ${c}
        where ${c.id} = ${mb.convId} and ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}
        returning ${mb.clearSeq} as clear_seq`,
);

/**
 * Moves the member's clear watermark up to the conversation's current
 * `max_seq`, and answers the new watermark.
 */
export async function clearHistory(db: SqlRunner, viewerId: string, convId: string): Promise<ClearOutcome> {
  return db.transaction(async (tx): Promise<ClearOutcome> => {
    const rows = await tx.rows<{ clear_seq: number }>(clearToMax({ viewerId, convId }));
    const through = rows[0]?.clear_seq;
    if (through === undefined) return NOT_FOUND;
    await recordChanges(tx, [{ convId, kind: 'history_cleared', fromSeq: 1, toSeq: through, userId: viewerId, subjectId: null }]);
    return { kind: 'cleared', throughSeq: through };
  });
}

/** What `markUnread` found: the read cursor now, or nothing the viewer can read. */
export type MarkUnreadOutcome = { kind: 'ok'; readSeq: number; moved: boolean } | NotFound;

const moveReadCursorBelow = statement<ActorMessageValues>(
  (v) => sql`with target as (select ${m.seq} as seq, ${mb.readSeq} as old_read_seq ${actorMessage(mb, c, m, v)}),
      moved as (
        update ${members} set ${bare(members.readSeq)} = (select seq - 1 from target)
        where ${members.convId} = ${v.convId} and ${members.userId} = ${v.actorId} and exists (select 1 from target)
        returning ${members.readSeq} as read_seq)
      select (select read_seq from moved) as read_seq, t.old_read_seq from target t`,
);

/**
 * "Mark unread from here": sets the viewer's read cursor to just below
 * message `seq`, which they must be able to read, forward or back (the one
 * way back; `markRead` never moves it back), in one statement. A cursor that
 * moved is handed to `publisher` once committed, so read receipts follow.
 */
export async function markUnread(db: SqlRunner, publisher: Publisher, viewerId: string, retention: RetentionClock, convId: string, seq: number): Promise<MarkUnreadOutcome> {
  const rows = await db.rows<{ read_seq: number; old_read_seq: number }>(moveReadCursorBelow({ actorId: viewerId, convId, seq, ...retentionValues(retention) }));
  const row = rows[0];
  if (row === undefined) return NOT_FOUND;
  const moved = row.read_seq !== row.old_read_seq;
  if (moved) publisher.publish([{ convId, kind: 'read', seq: row.read_seq, toSeq: row.read_seq, userId: viewerId, changeSeq: null }]);
  return { kind: 'ok', readSeq: row.read_seq, moved };
}

/** What `markRead` found. */
export type MarkReadOutcome = { kind: 'ok'; readSeq: number } | NotFound | { kind: 'beyond-max'; maxSeq: number };

const moveReadCursor = statement<{ viewerId: string; convId: string; seq: number }>(
  (v) => sql`with target as (
        select ${c.maxSeq} as max_seq, ${mb.readSeq} as old_read_seq from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
        where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}),
      moved as (
        update ${members} set ${bare(members.readSeq)} = greatest(${members.readSeq}, ${v.seq})
        where ${members.convId} = ${v.convId} and ${members.userId} = ${v.viewerId} and ${v.seq} <= (select max_seq from target)
        returning ${members.readSeq} as read_seq)
      select t.max_seq, (select read_seq from moved) as read_seq,
        coalesce((select read_seq from moved) > t.old_read_seq, false) as moved_forward
      from target t`,
);

/**
 * Moves the member's read cursor forward to `seq` (never back), in one
 * statement; a cursor that moved forward is handed to `publisher` once
 * committed (one that stayed put is not announced).
 */
export async function markRead(db: SqlRunner, publisher: Publisher, viewerId: string, convId: string, seq: number): Promise<MarkReadOutcome> {
  const rows = await db.rows<{ max_seq: number; read_seq: number | null; moved_forward: boolean }>(moveReadCursor({ viewerId, convId, seq }));
  const row = rows[0];
  if (row === undefined) return NOT_FOUND;
  if (row.read_seq === null) return { kind: 'beyond-max', maxSeq: row.max_seq };
  if (row.moved_forward) publisher.publish([{ convId, kind: 'read', seq: row.read_seq, toSeq: row.read_seq, userId: viewerId, changeSeq: null }]);
  return { kind: 'ok', readSeq: row.read_seq };
}
