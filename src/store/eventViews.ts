/**
 * What each subscriber sees of one notice, loaded for all of a process's
 * subscribers of the conversation at once: one statement answers "still a
 * member?" and "the message as you see it" for every one of them, and one
 * more reads the message's body for all who may see it. A notice costs a
 * process two statements whether 1 or 500 subscribers receive it.
 *
 * Per subscriber this is exactly what a request of theirs would read: the
 * same visibility predicate (`visibleTo`, with their own clear watermark,
 * hides and join point), at a fresh retention clock.
 */
import DataLoader from 'dataloader';
import { sql } from 'drizzle-orm';
import { createRunner, type SqlClient, type SqlRunner } from '../db/runner.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import { inKeyOrder } from './batch.ts';
import { findMessageBodies, type MessageBody, type MessageKey, messageKeyString } from './messages.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, type RawMessageRow, toMessageRow } from './rows.ts';
import { messageColumns, type RetentionClock, visibleFloor, visibleTo } from './sqlFragments.ts';
import type { Notice } from './notify.ts';

/** One subscriber's view of one notice: `NotFound` when they are no longer a member of the conversation. */
export type EventView = MemberView | NotFound;

/** What a member sees of one notice. */
export interface MemberView {
  kind: 'member';
  /** `sent`, `revoked`: the message as they see it; null when they cannot see it (or the notice names none). */
  message: MessageRow | null;
  /** Seqs at or below this are not theirs to see (cleared, before they joined, expired): no event about them. */
  floorSeq: number;
}

/** The loads of one notice, shared by every subscriber of its conversation in this process. */
export interface EventBatch {
  /** The instant this notice is read at: every subscriber applies the same retention cut-off. */
  retention: RetentionClock;
  /** One subscriber's view, by user id; the loads of one tick share one statement. */
  view: DataLoader<string, EventView>;
  /** Message bodies, shared by every subscriber. Only load keys a subscriber's view returned. */
  body: DataLoader<MessageKey, MessageBody, string>;
}

// Every row has its own viewer: the member's `user_id`.
const EACH_MEMBER = sql.raw('mb.user_id');

/** For each of `userIds`, in order: membership of `convId`, and message `seq` (if any) as they see it. */
export async function findEventViews(
  db: SqlRunner,
  retention: RetentionClock,
  convId: string,
  seq: number | null,
  userIds: readonly string[],
): Promise<EventView[]> {
  const message =
    seq === null
      ? sql`null::uuid as conv_id, null::int8 as seq, null::text as sender_id, null::text as created_at, null::text as revoked_at, null::text as revoked_by
        from unnest(${sql.param([...userIds])}::text[]) as u(user_id)
        left join members mb on mb.conv_id = ${convId} and mb.user_id = u.user_id
        left join conversations c on c.id = mb.conv_id`
      : sql`${messageColumns('m')}
        from unnest(${sql.param([...userIds])}::text[]) as u(user_id)
        left join members mb on mb.conv_id = ${convId} and mb.user_id = u.user_id
        left join conversations c on c.id = mb.conv_id
        left join messages m on m.conv_id = mb.conv_id and m.seq = ${seq}
          and ${visibleTo('m', EACH_MEMBER, visibleFloor('mb', 'c', retention))}`;
  const rows = await db.rows<RawMessageRow & { user_id: string; member: boolean; floor_seq: number | null }>(
    sql`select u.user_id, mb.user_id is not null as member, ${visibleFloor('mb', 'c', retention)} as floor_seq, ${message}`,
  );
  const views = rows.map((r) => ({
    userId: r.user_id,
    view: r.member ? { kind: 'member' as const, message: r.conv_id === null ? null : toMessageRow(r), floorSeq: r.floor_seq ?? 0 } : NOT_FOUND,
  }));
  return inKeyOrder(userIds, views, (id) => id, (row) => row.userId).map((row) => row?.view ?? NOT_FOUND);
}

/** Makes the loads of `notice`, read at a fresh clock under the server's retention limits. */
export function createEventBatch(client: SqlClient, serverRetention: RetentionPolicy, notice: Notice): EventBatch {
  // A runner of its own: the batch lives as long as its notice is being delivered.
  const db = createRunner(client);
  const retention: RetentionClock = { server: serverRetention, now: new Date() };
  const seq = notice.kind === 'sent' || notice.kind === 'revoked' ? notice.seq : null;
  return {
    retention,
    view: new DataLoader((userIds) => findEventViews(db, retention, notice.convId, seq, userIds)),
    body: new DataLoader((keys) => findMessageBodies(db, keys), { cacheKeyFn: messageKeyString }),
  };
}
