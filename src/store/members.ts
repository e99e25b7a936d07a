/**
 * Group membership over time: adding, removing and leaving, the history
 * visibility of a group, and pages of its members. Each change is one
 * transaction that first locks the conversation row, so concurrent changes
 * to one group take turns (and an owner's leave cannot race a removal).
 */
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, listedInJoinOrder, members } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { indexAddedMembers, markLargeIfGrownPast, unindexMember } from './inboxIndex.ts';
import { FORBIDDEN, type Forbidden, NOT_FOUND, type NotFound } from './outcome.ts';
import { bare, bareList, selectList } from './sqlFragments.ts';
import { type Slots, statement } from './statement.ts';

const c = alias(conversations, 'c');
const mb = alias(members, 'mb');

/** A conversation that is not a group: it has no owner, and its two members stay. */
export interface Direct {
  kind: 'direct';
}

/** Why a change only a group's owner may make was refused. */
export type MembershipRefusal = NotFound | Forbidden | Direct;

const DIRECT: Direct = Object.freeze({ kind: 'direct' });

/** The actor's membership of `convId`, with the conversation locked. */
type LockedMembership = { kind: 'member'; role: string; conversationKind: string } | NotFound;

const lockMembership = statement<{ convId: string; actorId: string }>(
  (v) => sql`select ${mb.role} as role, ${c.kind} as kind
      from ${conversations} ${c} join ${members} ${mb} on ${mb.convId} = ${c.id} and ${mb.userId} = ${v.actorId}
      where ${c.id} = ${v.convId}
      for update of ${c}`,
);

/** Locks conversation `convId` and reads the actor's membership of it. */
async function lockForMember(tx: SqlRunner, convId: string, actorId: string): Promise<LockedMembership> {
  const [row] = await tx.rows<{ role: string; kind: string }>(lockMembership({ convId, actorId }));
  return row === undefined ? NOT_FOUND : { kind: 'member', role: row.role, conversationKind: row.kind };
}

/** The refusal for an actor who must own the group, or null when they do. */
function ownerRefusal(member: LockedMembership): MembershipRefusal | null {
  if (member.kind === 'not-found') return member;
  if (member.conversationKind !== 'group') return DIRECT;
  return member.role === 'owner' ? null : FORBIDDEN;
}

/** Inserts the new members and their inbox rows, whose activity is read from the group until its next send (`JoinedActivity`). */
const insertMembers = statement<{ convId: string; userIds: string[] }>(
  (v) => sql`with added as (
        insert into ${members} (${bareList(members.convId, members.userId, members.role, members.joinedSeq)})
        select ${c.id}, u.user_id, 'member', ${c.maxSeq}
        from ${conversations} ${c}, unnest(${v.userIds}::text[]) as u(user_id)
        where ${c.id} = ${v.convId}
        on conflict do nothing
        returning ${members.convId}, ${members.userId}),
      indexed as (${indexAddedMembers(sql`added`, v.convId, 'at-read-time')})
      select user_id from added`,
);

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
    const added = await tx.rows<{ user_id: string }>(insertMembers({ convId, userIds: [...new Set(userIds)] }));
    if (added.length > 0) await markLargeIfGrownPast(tx, convId);
    return { kind: 'added' as const, count: added.length };
  });
}

/** Deletes a member row and the member's inbox row. */
const deleteMember = statement<{ convId: string; userId: string }>(
  (v) => sql`with unindexed as (${unindexMember(v.convId, v.userId)})
      delete from ${members} where ${members.convId} = ${v.convId} and ${members.userId} = ${v.userId} returning ${members.userId} as user_id`,
);

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
    const removed = await tx.rows(deleteMember({ convId, userId }));
    if (removed.length === 0) return { kind: 'not-in-group' as const };
    await afterRemoval(tx);
    return { kind: 'removed' as const };
  });
}

/** The longest-standing member of `convId` becomes its owner. */
const handOwnership = statement<{ convId: string }>(
  (v) => sql`update ${members} set ${bare(members.role)} = 'owner'
          where ${members.convId} = ${v.convId} and ${members.userId} = (
            select ${mb.userId} from ${members} ${mb} where ${mb.convId} = ${v.convId} order by ${mb.joinedAt}, ${mb.userId} limit 1)`,
);

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
    await tx.rows(deleteMember({ convId, userId: actorId }));
    if (member.role === 'owner') await tx.rows(handOwnership({ convId }));
    await afterLeaving(tx);
    return { kind: 'left' };
  });
}

const updateVisibility = statement<{ convId: string; visibility: string }>(
  (v) => sql`update ${conversations} set ${bare(conversations.historyVisibility)} = ${v.visibility} where ${conversations.id} = ${v.convId}`,
);

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
    await tx.rows(updateVisibility({ convId, visibility }));
    return { kind: 'set' as const };
  });
}

/** One membership row. */
export interface MemberRow extends Pick<typeof members.$inferSelect, 'userId' | 'readSeq' | 'joinedMillis'> {
  role: 'owner' | 'member';
}

/** Where a members page starts: after this (joined_millis, user_id). */
export interface MemberPosition {
  joinedMillis: number;
  userId: string;
}

/** A page of members as read: up to `limit + 1` rows. */
export interface MemberPage {
  kind: 'members';
  rows: MemberRow[];
}

interface MembersPageValues {
  viewerId: string;
  convId: string;
  limit: number;
  /** The cursor, unused on the first page. */
  afterJoinedMillis: number;
  afterUserId: string;
}

/** The viewer's member row, as the members page checks it. */
const viewer = alias(members, 'v');
const m = alias(members, 'm');

/**
 * A members page, from the first member (`start` none) or after a cursor.
 * Unordered: listMembers puts the rows in join order. A sort here of the
 * page's 101 rows by their formatted times cost PostgreSQL about 30 µs of
 * a member list's 200 µs of execution (README, Performance: the
 * seventeenth session). The join time is read as the stored milliseconds
 * alone (the API spells it as ISO text). A viewer who is a member gets at
 * least one row, all null when the page is empty; anyone else none.
 */
function membersStatement(start: ((v: Slots<MembersPageValues>) => SQL) | null) {
  return statement<MembersPageValues>(
    (v) => sql`select p.*
      from (select ${mb.convId}, ${mb.userId} from ${members} ${mb} where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}) ${viewer}
      left join lateral (
        select ${selectList<MemberRow>({
          userId: m.userId,
          role: sql<MemberRow['role']>`${m.role}`,
          joinedMillis: m.joinedMillis,
          readSeq: m.readSeq,
        })}
        from ${members} ${m} where ${m.convId} = ${v.convId} and ${listedInJoinOrder(m.joinedAt)} and ${start?.(v) ?? sql`true`}
        order by ${m.joinedMillis}, ${m.userId} limit ${v.limit}) p on true`,
  );
}

const firstMembersPage = membersStatement(null);
// The order, the range and the condition the index is partial on are
// `members_join_order_idx`'s, so a page reads
// its own rows from the index (and the next one past them), whatever the
// size of the group: a first page of 100 in a group of 10,000 read and
// sorted all 10,000 rows.
const laterMembersPage = membersStatement(
  (v) => sql`(${m.joinedMillis}, ${m.userId}) > (${v.afterJoinedMillis}::int8, ${v.afterUserId})`,
);

/**
 * Up to `limit + 1` members of `convId` in join order after `after`, if
 * `viewerId` is a member (checked in the same statement); `NotFound` otherwise.
 * One range of `members_join_order_idx`: about `limit` rows read, however
 * large the group.
 */
export async function listMembers(
  db: SqlRunner,
  viewerId: string,
  convId: string,
  after: MemberPosition | null,
  limit: number,
): Promise<MemberPage | NotFound> {
  const rows = await db.rows<MemberRow | { [Field in keyof MemberRow]: null }>(
    after === null
      ? firstMembersPage({ viewerId, convId, limit: limit + 1, afterJoinedMillis: 0, afterUserId: '' })
      : laterMembersPage({ viewerId, convId, limit: limit + 1, afterJoinedMillis: after.joinedMillis, afterUserId: after.userId }),
  );
  if (rows.length === 0) return NOT_FOUND;
  // The rows as they came, not copied: each object made per edge is more for
  // the collector, a tenth of the server's time for a list of 100 (profiled).
  const listed = rows.filter((r): r is MemberRow => r.userId !== null);
  // Usually in join order already (then sorting is one pass), but the
  // statement does not promise it. Ties within a millisecond are left in
  // the order they came (stable sort), the scan's order by user id: in the
  // database's collation, which JavaScript's `<` may not share.
  listed.sort((a, b) => a.joinedMillis - b.joinedMillis);
  return { kind: 'members', rows: listed };
}

const updateMembersMayPin = statement<{ convId: string; membersMayPin: boolean }>(
  (v) => sql`update ${conversations} set ${bare(conversations.membersMayPin)} = ${v.membersMayPin} where ${conversations.id} = ${v.convId}`,
);

/** Sets whether every member of group `convId` may pin messages, on behalf of its owner. */
export async function setMembersMayPin(db: SqlRunner, actorId: string, convId: string, membersMayPin: boolean): Promise<{ kind: 'set' } | MembershipRefusal> {
  return db.transaction(async (tx) => {
    const refusal = ownerRefusal(await lockForMember(tx, convId, actorId));
    if (refusal !== null) return refusal;
    await tx.rows(updateMembersMayPin({ convId, membersMayPin }));
    return { kind: 'set' as const };
  });
}
