/**
 * Revoking: the message becomes a placeholder for everyone and its text
 * (with its earlier versions and its reactions) is deleted in the same transaction, so no later read can serve it. The revoke
 * is announced once it has committed.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messageEdits, messageMentions, messagePins, messageReactions, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { decideRevoke } from '../history/revokeRule.ts';
import type { Publisher } from './notify.ts';
import { recordChanges } from './changes.ts';
import { NOT_FOUND, type Forbidden, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import { actorMessage, bare, messageColumns, type RetentionClock, type RetentionValues, retentionValues } from './sqlFragments.ts';
import { statement } from './statement.ts';

/** What a revoke did. */
export type RevokeOutcome =
  | { kind: 'revoked'; message: MessageRow }
  | { kind: 'already-revoked'; message: MessageRow }
  | NotFound
  | (Forbidden & { reason: 'window-passed' | 'not-sender' });

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const b = alias(messageBodies, 'b');
const ed = alias(messageEdits, 'ed');
const rx = alias(messageReactions, 'rx');
const pn = alias(messagePins, 'pn');
const mn = alias(messageMentions, 'mn');
/** The CTE of revoked rows: `returning *` of `messages`. */
const r = alias(messages, 'r');

interface RevokeValues {
  actorId: string;
  convId: string;
  seq: number;
}

/** The message as the actor sees it, with what the rules need, locked so two revokes (or a revoke and a purge) take turns. */
const lockForRevoke = statement<RevokeValues & RetentionValues>(
  (v) => sql`select ${messageColumns(m)}, ${mb.role} as role, ${c.kind} as kind,
          (extract(epoch from ${m.createdAt}) * 1000)::float8 as created_ms,
          (extract(epoch from now()) * 1000)::float8 as now_ms
        ${actorMessage(mb, c, m, v)}
        for update of ${m}`,
);

const revoke = statement<RevokeValues>(
  (v) => sql`with ${r} as (
          update ${messages} set ${bare(messages.revokedAt)} = now(), ${bare(messages.revokedBy)} = ${v.actorId}
          where ${messages.convId} = ${v.convId} and ${messages.seq} = ${v.seq}
          returning *),
        gone as (delete from ${messageBodies} ${b} using ${r} where ${b.convId} = ${v.convId} and ${b.seq} = ${r.seq}),
        -- Its earlier versions, its reactions, its pin and its mentions go with its text;
        -- every table by the bound conversation id, so the statement routes to one shard.
        versions as (delete from ${messageEdits} ${ed} using ${r} where ${ed.convId} = ${v.convId} and ${ed.seq} = ${r.seq}),
        reactions as (delete from ${messageReactions} ${rx} using ${r} where ${rx.convId} = ${v.convId} and ${rx.seq} = ${r.seq}),
        pins as (delete from ${messagePins} ${pn} using ${r} where ${pn.convId} = ${v.convId} and ${pn.seq} = ${r.seq}),
        mentions as (delete from ${messageMentions} ${mn} using ${r} where ${mn.convId} = ${v.convId} and ${mn.seq} = ${r.seq})
        select ${messageColumns(r)} from ${r}`,
);

/** What the revoke's transaction answers: a revoke carries its change-feed entry's number for the notice. */
type Committed = Exclude<RevokeOutcome, { kind: 'revoked' }> | { kind: 'revoked'; message: MessageRow; changeSeq: number };

/** Revokes message `seq` of `convId` on behalf of `actorId`, if the rules allow; a revoke is handed to `publisher` once committed. */
export async function revokeMessage(
  db: SqlRunner,
  publisher: Publisher,
  actorId: string,
  convId: string,
  seq: number,
  windowSeconds: number,
  retention: RetentionClock,
): Promise<RevokeOutcome> {
  const outcome = await db.transaction(async (tx): Promise<Committed> => {
    const [found] = await tx.rows<MessageRow & { role: 'owner' | 'member'; kind: 'direct' | 'group'; created_ms: number; now_ms: number }>(
      lockForRevoke({ actorId, convId, seq, ...retentionValues(retention) }),
    );
    if (found === undefined) return NOT_FOUND;
    const decision = decideRevoke({
      actorId,
      senderId: found.senderId,
      actorRole: found.role,
      conversationKind: found.kind,
      createdAtMs: found.created_ms,
      nowMs: found.now_ms,
      windowSeconds,
    });
    // Someone who could never revoke it is refused even once it is revoked;
    // the sender retrying after the window gets it back unchanged.
    if (found.revokedAt !== null && !(decision.allowed === false && decision.reason === 'not-sender')) {
      return { kind: 'already-revoked', message: messageRowOf(found) };
    }
    if (!decision.allowed) return { kind: 'forbidden', reason: decision.reason };
    const [updated] = await tx.rows<MessageRow>(revoke({ actorId, convId, seq }));
    const [entry] = await recordChanges(tx, [{ convId, kind: 'revoked', fromSeq: seq, toSeq: seq, userId: null, subjectId: null }]);
    return { kind: 'revoked', message: messageRowOf(updated!), changeSeq: entry!.changeSeq };
  });
  if (outcome.kind !== 'revoked') return outcome;
  const { message, changeSeq } = outcome;
  publisher.publish([{ convId: message.convId, kind: 'revoked', seq: message.seq, toSeq: message.seq, userId: null, changeSeq }]);
  return { kind: 'revoked', message };
}
