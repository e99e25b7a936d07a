/**
 * Pins: a conversation's pinned messages, the same for every member and
 * shown through each member's views. Pinning and unpinning lock the message
 * (so the limit holds under concurrent pins, and a revoke, which deletes the
 * pin, takes its turn), record a change-feed entry for everyone and are
 * announced live once committed. The group's `members_may_pin` setting is
 * the owner's.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messagePins, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { PinPosition } from '../history/listCursors.ts';
import { decidePin, type PinDecision } from '../history/pinRule.ts';
import { recordChanges } from './changes.ts';
import type { MessageKey } from './messages.ts';
import type { Publisher } from './notify.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  type ActorMessageValues,
  actorMessage,
  bareList,
  isoTime,
  messageColumns,
  type RetentionClock,
  type RetentionValues,
  retentionValues,
  visibleFloor,
  visibleTo,
} from './sqlFragments.ts';
import { statement } from './statement.ts';

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const p = alias(messagePins, 'p');

/** What pinning or unpinning did. */
export type PinOutcome =
  | { kind: 'done'; message: MessageRow; changed: boolean }
  | NotFound
  | { kind: 'refused'; reason: Extract<PinDecision, { allowed: false }>['reason'] };

const lockForPin = statement<ActorMessageValues>(
  (v) => sql`select ${messageColumns(m)}, ${mb.role} as role, ${c.kind} as conversation_kind, ${c.membersMayPin} as members_may_pin,
          exists (select 1 from ${messagePins} ${p} where ${p.convId} = ${v.convId} and ${p.seq} = ${m.seq}) as pinned,
          (select count(*)::int from ${messagePins} ${p} where ${p.convId} = ${v.convId}) as pin_count
        ${actorMessage(mb, c, m, v)}
        for update of ${m}`,
);

const pin = statement<{ actorId: string; convId: string; seq: number }>(
  (v) => sql`insert into ${messagePins} (${bareList(messagePins.convId, messagePins.seq, messagePins.pinnedBy)}) values (${v.convId}, ${v.seq}, ${v.actorId})`,
);
const unpin = statement<{ convId: string; seq: number }>(
  (v) => sql`delete from ${messagePins} where ${messagePins.convId} = ${v.convId} and ${messagePins.seq} = ${v.seq}`,
);

/**
 * Pins (`on`) or unpins message `key` on behalf of `actorId` (`admin`: their
 * token carries the admin role), who must be able to read it, under the
 * rule of src/history/pinRule.ts. A change is handed to `publisher` once
 * committed; one that changes nothing is neither recorded nor announced.
 */
export async function setPin(
  db: SqlRunner,
  publisher: Publisher,
  actorId: string,
  admin: boolean,
  key: MessageKey,
  on: boolean,
  retention: RetentionClock,
): Promise<PinOutcome> {
  const { convId, seq } = key;
  const outcome = await db.transaction(async (tx): Promise<PinOutcome | { kind: 'committed'; message: MessageRow; changeSeq: number }> => {
    const [found] = await tx.rows<
      MessageRow & { role: 'owner' | 'member'; conversation_kind: 'direct' | 'group'; members_may_pin: boolean; pinned: boolean; pin_count: number }
    >(lockForPin({ actorId, convId, seq, ...retentionValues(retention) }));
    if (found === undefined) return NOT_FOUND;
    const message = messageRowOf(found);
    const decision = decidePin({
      actorRole: found.role,
      admin,
      conversationKind: found.conversation_kind,
      membersMayPin: found.members_may_pin,
      pin: on,
      revoked: found.revokedAt !== null,
      alreadyPinned: found.pinned,
      pinnedCount: found.pin_count,
    });
    if (!decision.allowed) return { kind: 'refused', reason: decision.reason };
    if (!decision.changes) return { kind: 'done', message, changed: false };
    await tx.rows(on ? pin({ actorId, convId, seq }) : unpin({ convId, seq }));
    const [entry] = await recordChanges(tx, [{ convId, kind: on ? 'pinned' : 'unpinned', fromSeq: seq, toSeq: seq, userId: null, subjectId: null }]);
    return { kind: 'committed', message, changeSeq: entry!.changeSeq };
  });
  if (outcome.kind !== 'committed') return outcome;
  publisher.publish([{ convId, kind: on ? 'pinned' : 'unpinned', seq, toSeq: seq, userId: null, changeSeq: outcome.changeSeq }]);
  return { kind: 'done', message: outcome.message, changed: true };
}

/** A pinned message as its list shows it. */
export interface PinRow {
  message: MessageRow;
  pinnedBy: string;
  /** ISO 8601, UTC. */
  pinnedAt: string;
  /** Where it is in the list: the pin's time in microseconds, then its seq. */
  position: PinPosition;
}

const MICROS = sql`(extract(epoch from ${p.pinnedAt}) * 1000000)::int8`;

const pinPage = statement<RetentionValues & { viewerId: string; convId: string; afterMicros: number; afterSeq: number; limit: number }>(
  (v) => sql`select ${messageColumns(m)}, ${p.pinnedBy} as pinned_by, ${isoTime(p.pinnedAt)} as pinned_at, ${MICROS} as pinned_micros
      from ${members} ${mb}
      join ${conversations} ${c} on ${c.id} = ${mb.convId}
      join ${messagePins} ${p} on ${p.convId} = ${mb.convId}
      join ${messages} ${m} on ${m.convId} = ${p.convId} and ${m.seq} = ${p.seq}
      where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.viewerId}
        and (${p.pinnedAt}, ${p.seq}) < (timestamptz 'epoch' + ${v.afterMicros}::int8 * interval '1 microsecond', ${v.afterSeq}::int8)
        and ${visibleTo(m, v.viewerId, visibleFloor(mb, c, v, v.convId), v.convId)}
      order by ${p.pinnedAt} desc, ${p.seq} desc
      limit ${v.limit}`,
);

/**
 * The pins of `convId` that `viewerId` can see, most recently pinned first,
 * after `after` (null: from the newest), up to `limit` rows, in one
 * statement; none when they are not a member.
 */
export async function scanPins(
  db: SqlRunner,
  viewerId: string,
  retention: RetentionClock,
  convId: string,
  after: PinPosition | null,
  limit: number,
): Promise<PinRow[]> {
  const rows = await db.rows<MessageRow & { pinned_by: string; pinned_at: string; pinned_micros: number }>(
    pinPage({
      ...retentionValues(retention),
      viewerId,
      convId,
      afterMicros: after?.pinnedMicros ?? 253_402_300_800_000_000,
      afterSeq: after?.seq ?? Number.MAX_SAFE_INTEGER,
      limit,
    }),
  );
  return rows.map((row) => ({
    message: messageRowOf(row),
    pinnedBy: row.pinned_by,
    pinnedAt: row.pinned_at,
    position: { pinnedMicros: Number(row.pinned_micros), seq: row.seq },
  }));
}
