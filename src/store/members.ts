/**
 * Group membership over time: adding, removing and leaving, the history
 * visibility of a group, and pages of its members. Each change is one
 * transaction that first locks the conversation row, so concurrent changes
 * to one group take turns (and an owner's leave cannot race a removal).
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { FORBIDDEN, type Forbidden, NOT_FOUND, type NotFound } from './outcome.ts';
import { isoTime } from './sqlFragments.ts';

/** A conversation that is not a group: it has no owner, and its two members stay. */
export interface Direct {
  kind: 'direct';
}

/** Why a change only a group's owner may make was refused. */
export type MembershipRefusal = NotFound | Forbidden | Direct;

const DIRECT: Direct = Object.freeze({ kind: 'direct' });

/** The actor's membership of `convId`, with the conversation locked. */
type LockedMembership = { kind: 'member'; role: string; conversationKind: string } | NotFound;

/** Locks conversation `convId` and reads the actor's membership of it. */
async function lockForMember(tx: SqlRunner, convId: string, actorId: string): Promise<LockedMembership> {
  const [row] = await tx.rows<{ role: string; kind: string }>(sql`select mb.role, c.kind
      from conversations c join members mb on mb.conv_id = c.id and mb.user_id = ${actorId}
      where c.id = ${convId}
      for update of c`);
  return row === undefined ? NOT_FOUND : { kind: 'member', role: row.role, conversationKind: row.kind };
}

/** The refusal for an actor who must own the group, or null when they do. */
function ownerRefusal(member: LockedMembership): MembershipRefusal | null {
  if (member.kind === 'not-found') return member;
  if (member.conversationKind !== 'group') return DIRECT;
  return member.role === 'owner' ? null : FORBIDDEN;
}

/**
 * Adds `userIds` to group `convId` as members, on behalf of its owner. Each
 * new member's `joined_seq` is the group's `max_seq` now: what they see of
 * older history under `since_joined`.
 */
export async function addMembers(
  db: SqlRunner,
  actorId: string,
  convId: string,
  userIds: readonly string[],
): Promise<{ kind: 'added'; count: number } | MembershipRefusal> {
  return db.transaction(async (tx) => {
    const refusal = ownerRefusal(await lockForMember(tx, convId, actorId));
    if (refusal !== null) return refusal;
    const added = await tx.rows<{ user_id: string }>(sql`insert into members (conv_id, user_id, role, joined_seq)
        select c.id, u.user_id, 'member', c.max_seq
        from conversations c, unnest(${sql.param([...new Set(userIds)])}::text[]) as u(user_id)
        where c.id = ${convId}
        on conflict do nothing
        returning user_id`);
    return { kind: 'added' as const, count: added.length };
  });
}

/**
 * Removes `userId` from group `convId` on behalf of its owner (who cannot
 * remove themselves); `not-in-group` when `userId` is not a member.
 */
export async function removeMember(
  db: SqlRunner,
  actorId: string,
  convId: string,
  userId: string,
  afterRemoval: (tx: SqlRunner) => Promise<void>,
): Promise<{ kind: 'removed' | 'not-in-group' | 'self' } | MembershipRefusal> {
  return db.transaction(async (tx) => {
    const refusal = ownerRefusal(await lockForMember(tx, convId, actorId));
    if (refusal !== null) return refusal;
    if (userId === actorId) return { kind: 'self' as const };
    const removed = await tx.rows(sql`delete from members where conv_id = ${convId} and user_id = ${userId} returning user_id`);
    if (removed.length === 0) return { kind: 'not-in-group' as const };
    await afterRemoval(tx);
    return { kind: 'removed' as const };
  });
}

/**
 * `actorId` leaves group `convId`. An owner who leaves hands ownership to
 * the longest-standing remaining member, so a group with members always has
 * an owner.
 */
export async function leaveConversation(
  db: SqlRunner,
  actorId: string,
  convId: string,
  afterLeaving: (tx: SqlRunner) => Promise<void>,
): Promise<{ kind: 'left' } | NotFound | Direct> {
  return db.transaction(async (tx): Promise<{ kind: 'left' } | NotFound | Direct> => {
    const member = await lockForMember(tx, convId, actorId);
    if (member.kind === 'not-found') return member;
    if (member.conversationKind !== 'group') return DIRECT;
    await tx.rows(sql`delete from members where conv_id = ${convId} and user_id = ${actorId}`);
    if (member.role === 'owner') {
      await tx.rows(sql`update members set role = 'owner'
          where conv_id = ${convId} and user_id = (
            select user_id from members where conv_id = ${convId} order by joined_at, user_id limit 1)`);
    }
    await afterLeaving(tx);
    return { kind: 'left' };
  });
}

/** Sets group `convId`'s history visibility on behalf of its owner. */
export async function setHistoryVisibility(
  db: SqlRunner,
  actorId: string,
  convId: string,
  visibility: 'shared' | 'since_joined',
): Promise<{ kind: 'set' } | MembershipRefusal> {
  return db.transaction(async (tx) => {
    const refusal = ownerRefusal(await lockForMember(tx, convId, actorId));
    if (refusal !== null) return refusal;
    await tx.rows(sql`update conversations set history_visibility = ${visibility} where id = ${convId}`);
    return { kind: 'set' as const };
  });
}

/** One membership row. */
export interface MemberRow {
  userId: string;
  role: 'owner' | 'member';
  /** ISO 8601, UTC. */
  joinedAt: string;
  readSeq: number;
}

/** Where a members page starts: after this (joined_at, user_id). */
export interface MemberPosition {
  joinedAt: string;
  userId: string;
}

/** A page of members as read: up to `limit + 1` rows. */
export interface MemberPage {
  kind: 'members';
  rows: MemberRow[];
}

/**
 * Up to `limit + 1` members of `convId` in join order after `after`, if
 * `viewerId` is a member (checked in the same statement); `NotFound` otherwise.
 */
export async function listMembers(
  db: SqlRunner,
  viewerId: string,
  convId: string,
  after: MemberPosition | null,
  limit: number,
): Promise<MemberPage | NotFound> {
  // Ordered by the join time as the cursor carries it (milliseconds), so
  // the row a cursor came from compares equal, never after itself.
  const start =
    after === null ? sql`true` : sql`(date_trunc('milliseconds', m.joined_at), m.user_id) > (${after.joinedAt}::timestamptz, ${after.userId})`;
  const rows = await db.rows<{ viewer: string; user_id: string | null; role: 'owner' | 'member'; joined_at: string; read_seq: number }>(sql`select v.user_id as viewer, p.*
      from (select mb.conv_id, mb.user_id from members mb where mb.conv_id = ${convId} and mb.user_id = ${viewerId}) v
      left join lateral (
        select m.user_id, m.role, ${isoTime('m.joined_at')} as joined_at, m.read_seq
        from members m where m.conv_id = v.conv_id and ${start}
        order by date_trunc('milliseconds', m.joined_at), m.user_id limit ${limit + 1}) p on true
      order by p.joined_at, p.user_id`);
  if (rows.length === 0) return NOT_FOUND;
  return {
    kind: 'members',
    rows: rows.filter((r) => r.user_id !== null).map((r) => ({ userId: r.user_id!, role: r.role, joinedAt: r.joined_at, readSeq: r.read_seq })),
  };
}
