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
import { type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { createRunner, type SqlClient, type SqlRunner } from '../db/runner.ts';
import { conversations, members, messages } from '../db/schema.ts';
import type { RetentionPolicy } from '../history/retention.ts';
import { inKeyOrder } from './batch.ts';
import { findMessageBodies, type MessageBody, type MessageKey, messageKeyString } from './messages.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  messageColumns,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  selectList,
  visibleFloor,
  visibleTo,
} from './sqlFragments.ts';
import { type Slots, statement } from './statement.ts';
import type { Notice } from './notify.ts';

/** One subscriber's view of one notice: `NotFound` when they are no longer a member of the conversation. */
type EventView = MemberView | NotFound;

/** What a member sees of one notice. */
interface MemberView {
  kind: 'member';
  /** `sent`, `revoked`, `edited`, `reacted`, `pinned`, `unpinned`: the message as they see it; null when they cannot see it (or the notice names none). */
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

const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const m = alias(messages, 'm');

/** The message columns of a notice that names no message: all null. */
const NO_MESSAGE = selectList<{ [Field in keyof MessageRow]: null }>({
  convId: sql<null>`null::uuid`,
  seq: sql<null>`null::int8`,
  senderId: sql<null>`null::text`,
  createdAt: sql<null>`null::text`,
  revokedAt: sql<null>`null::text`,
  revokedBy: sql<null>`null::text`,
  editedAt: sql<null>`null::text`,
  replyToSeq: sql<null>`null::int8`,
  threadRootSeq: sql<null>`null::int8`,
});

interface EventViewValues extends RetentionValues {
  convId: string;
  userIds: string[];
  /** The notice's message; unused when it names none. */
  seq: number;
}

/** One row per subscriber: their membership, floor and (`message`) the notice's message as they see it. */
function eventViewStatement(message: (v: Slots<EventViewValues>) => { columns: SQL; join: SQL }) {
  return statement<EventViewValues>((v) => {
    const { columns, join } = message(v);
    return sql`select u.user_id, ${mb.userId} is not null as member, ${visibleFloor(mb, c, v, v.convId)} as floor_seq, ${columns}
        from unnest(${v.userIds}::text[]) as u(user_id)
        left join ${members} ${mb} on ${mb.convId} = ${v.convId} and ${mb.userId} = u.user_id
        left join ${conversations} ${c} on ${c.id} = ${mb.convId} and ${c.id} = ${v.convId}${join}`;
  });
}

const viewsWithoutMessage = eventViewStatement(() => ({ columns: NO_MESSAGE, join: sql`` }));
// Every row has its own viewer: the member's `user_id`.
const viewsOfMessage = eventViewStatement((v) => ({
  columns: messageColumns(m),
  join: sql`
        left join ${messages} ${m} on ${m.convId} = ${mb.convId} and ${m.convId} = ${v.convId} and ${m.seq} = ${v.seq}
          and ${visibleTo(m, mb.userId, visibleFloor(mb, c, v, v.convId), v.convId)}`,
}));

/** For each of `userIds`, in order: membership of `convId`, and message `seq` (if any) as they see it. */
async function findEventViews(
  db: SqlRunner,
  retention: RetentionClock,
  convId: string,
  seq: number | null,
  userIds: readonly string[],
): Promise<EventView[]> {
  const values = { ...retentionValues(retention), convId, userIds: [...userIds] };
  const rows = await db.rows<{ [Field in keyof MessageRow]: MessageRow[Field] | null } & { user_id: string; member: boolean; floor_seq: number | null }>(
    seq === null ? viewsWithoutMessage({ ...values, seq: 0 }) : viewsOfMessage({ ...values, seq }),
  );
  const views = rows.map((r) => ({
    userId: r.user_id,
    view: r.member ? { kind: 'member' as const, message: r.convId === null ? null : messageRowOf(r as MessageRow), floorSeq: r.floor_seq ?? 0 } : NOT_FOUND,
  }));
  return inKeyOrder(userIds, views, (id) => id, (row) => row.userId).map((row) => row?.view ?? NOT_FOUND);
}

/** Makes the loads of `notice`, read at a fresh clock under the server's retention limits. */
export function createEventBatch(client: SqlClient, serverRetention: RetentionPolicy, notice: Notice): EventBatch {
  // A runner of its own: the batch lives as long as its notice is being delivered.
  const db = createRunner(client);
  const retention: RetentionClock = { server: serverRetention, now: new Date() };
  // Every kind but purges, read cursors and membership names one message.
  const seq = notice.kind === 'purged' || notice.kind === 'read' || notice.kind === 'member' ? null : notice.seq;
  return {
    retention,
    view: new DataLoader((userIds) => findEventViews(db, retention, notice.convId, seq, userIds)),
    body: new DataLoader((keys) => findMessageBodies(db, keys), { cacheKeyFn: messageKeyString }),
  };
}
