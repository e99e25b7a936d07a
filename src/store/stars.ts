/**
 * Starred messages: private to each user. Starring needs only that the
 * message be readable; the list applies the viewer's views in its one
 * statement, so a star on a message that became invisible (hidden, cleared,
 * expired, purged, or a conversation left) drops out without leaving a
 * page short. Each star and unstar records a change-feed entry only the
 * user sees, so their other devices follow.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messages, messageStars } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { StarPosition } from '../history/listCursors.ts';
import { amongConversations } from './batchConversations.ts';
import { inKeyOrder } from './batch.ts';
import { recordChanges } from './changes.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  type ActorMessageValues,
  actorMessage,
  bareList,
  isoTime,
  keyArrays,
  keyValues,
  type KeyValues,
  messageColumns,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  visibleFloor,
  visibleTo,
} from './sqlFragments.ts';
import { statement } from './statement.ts';
import { beforeTimedStart, epochMicros, timedAfterValues, type TimedAfterValues } from './timedList.ts';

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const s = alias(messageStars, 's');

/** What starring or unstarring did; `changed` false: it already was so. */
export type StarOutcome = { kind: 'done'; message: MessageRow; changed: boolean } | NotFound;

const findReadable = statement<ActorMessageValues>((v) => sql`select ${messageColumns(m)} ${actorMessage(mb, c, m, v)}`);

const star = statement<{ actorId: string; convId: string; seq: number }>(
  (v) => sql`insert into ${messageStars} (${bareList(messageStars.convId, messageStars.seq, messageStars.userId)})
      values (${v.convId}, ${v.seq}, ${v.actorId}) on conflict do nothing returning 1`,
);

const unstar = statement<{ actorId: string; convId: string; seq: number }>(
  (v) => sql`delete from ${messageStars} where ${messageStars.convId} = ${v.convId} and ${messageStars.seq} = ${v.seq}
      and ${messageStars.userId} = ${v.actorId} returning 1`,
);

/** Stars (`on`) or unstars message `key` for `actorId`, who must be able to read it; idempotent both ways, one transaction with its change entry. */
export async function setStar(db: SqlRunner, actorId: string, key: MessageKey, on: boolean, retention: RetentionClock): Promise<StarOutcome> {
  const { convId, seq } = key;
  return db.transaction(async (tx): Promise<StarOutcome> => {
    const [found] = await tx.rows<MessageRow>(findReadable({ actorId, convId, seq, ...retentionValues(retention) }));
    if (found === undefined) return NOT_FOUND;
    const changed = (await tx.rows((on ? star : unstar)({ actorId, convId, seq }))).length > 0;
    if (changed) {
      await recordChanges(tx, [{ convId, kind: on ? 'starred' : 'unstarred', fromSeq: seq, toSeq: seq, userId: actorId, subjectId: null }]);
    }
    return { kind: 'done', message: messageRowOf(found), changed };
  });
}

/** The batch's conversations bound on the stars, so it reads their shards alone (batchConversations.ts). */
const starredKeys = statement<KeyValues & { viewerId: string }>(
  (v) => sql`select ${s.convId} as "convId", ${s.seq} as seq from ${keyArrays(v)} as k(conv_id, seq)
      join ${messageStars} ${s} on ${s.convId} = k.conv_id and ${s.seq} = k.seq and ${s.userId} = ${v.viewerId}
        and ${amongConversations(s.convId, v.convIds)}`,
);

/** For each of `keys`, in order, whether `viewerId` starred it; one statement for a page. */
export async function findStarredByMe(db: SqlRunner, viewerId: string, keys: readonly MessageKey[]): Promise<boolean[]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<MessageKey>(starredKeys({ ...keyValues(keys), viewerId }));
  return inKeyOrder(keys, rows, messageKeyString, messageKeyString).map((row) => row !== null);
}


/** A starred message as its list shows it. */
export interface StarredRow {
  message: MessageRow;
  position: StarPosition;
  /** ISO 8601, UTC. */
  starredAt: string;
}

const MICROS = epochMicros(s.starredAt);

const starredPage = statement<RetentionValues & TimedAfterValues & { viewerId: string; limit: number }>(
  (v) => sql`select ${messageColumns(m)}, ${MICROS} as starred_micros, ${isoTime(s.starredAt)} as starred_at
      from ${messageStars} ${s}
      join ${members} ${mb} on ${mb.convId} = ${s.convId} and ${mb.userId} = ${s.userId}
      join ${conversations} ${c} on ${c.id} = ${s.convId}
      join ${messages} ${m} on ${m.convId} = ${s.convId} and ${m.seq} = ${s.seq}
      where ${s.userId} = ${v.viewerId}
        and ${beforeTimedStart(s.starredAt, s.convId, s.seq, v)}
        and ${visibleTo(m, v.viewerId, visibleFloor(mb, c, v))}
      order by ${s.starredAt} desc, ${s.convId} desc, ${s.seq} desc
      limit ${v.limit}`,
);

/**
 * The viewer's starred messages that they can still see, most recently
 * starred first, after `after` (null: from the newest), up to `limit` rows,
 * in one statement.
 */
export async function scanStarred(db: SqlRunner, viewerId: string, retention: RetentionClock, after: StarPosition | null, limit: number): Promise<StarredRow[]> {
  const rows = await db.rows<MessageRow & { starred_micros: number; starred_at: string }>(
    starredPage({
      ...retentionValues(retention),
      viewerId,
      ...timedAfterValues(after === null ? null : { micros: after.starredMicros, convId: after.convId, seq: after.seq }),
      limit,
    }),
  );
  return rows.map((row) => ({
    message: messageRowOf(row),
    position: { convId: row.convId, seq: row.seq, starredMicros: Number(row.starred_micros) },
    starredAt: row.starred_at,
  }));
}
