/**
 * Revoking: the message becomes a placeholder for everyone and its text is
 * deleted in the same transaction, so no later read can serve it.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { decideRevoke } from '../history/revokeRule.ts';
import { notifyExpression } from './notify.ts';
import { recordChanges } from './changes.ts';
import { NOT_FOUND, type Forbidden, type NotFound } from './outcome.ts';
import { type MessageRow, type RawMessageRow, toMessageRow } from './rows.ts';
import { messageColumns, type RetentionClock, visibleFloor, visibleTo } from './sqlFragments.ts';

/** What a revoke did. */
export type RevokeOutcome =
  | { kind: 'revoked'; message: MessageRow }
  | { kind: 'already-revoked'; message: MessageRow }
  | NotFound
  | (Forbidden & { reason: 'window-passed' | 'not-sender' });

/** Revokes message `seq` of `convId` on behalf of `actorId`, if the rules allow. */
export async function revokeMessage(
  db: SqlRunner,
  actorId: string,
  convId: string,
  seq: number,
  windowSeconds: number,
  retention: RetentionClock,
): Promise<RevokeOutcome> {
  return db.transaction(async (tx): Promise<RevokeOutcome> => {
    // Locks the row so two revokes (or a revoke and a purge) take turns.
    const found = (await tx.rows<RawMessageRow & { role: 'owner' | 'member'; kind: 'direct' | 'group'; created_ms: number; now_ms: number }>(sql`select ${messageColumns('m')}, mb.role, c.kind,
          (extract(epoch from m.created_at) * 1000)::float8 as created_ms,
          (extract(epoch from now()) * 1000)::float8 as now_ms
        from members mb
        join conversations c on c.id = mb.conv_id
        join messages m on m.conv_id = mb.conv_id and m.seq = ${seq}
        where mb.conv_id = ${convId} and mb.user_id = ${actorId}
          and ${visibleTo('m', actorId, visibleFloor('mb', 'c', retention))}
        for update of m`))[0];
    if (found === undefined) return NOT_FOUND;
    const decision = decideRevoke({
      actorId,
      senderId: found.sender_id,
      actorRole: found.role,
      conversationKind: found.kind,
      createdAtMs: found.created_ms,
      nowMs: found.now_ms,
      windowSeconds,
    });
    // Someone who could never revoke it is refused even once it is revoked;
    // the sender retrying after the window gets it back unchanged.
    if (found.revoked_at !== null && !(decision.allowed === false && decision.reason === 'not-sender')) {
      return { kind: 'already-revoked', message: toMessageRow(found) };
    }
    if (!decision.allowed) return { kind: 'forbidden', reason: decision.reason };
    const updated = await tx.rows<RawMessageRow>(sql`with r as (
          update messages set revoked_at = now(), revoked_by = ${actorId}
          where conv_id = ${convId} and seq = ${seq}
          returning *),
        gone as (delete from message_bodies b using r where b.conv_id = r.conv_id and b.seq = r.seq)
        select ${messageColumns('r')}, ${notifyExpression({ convId: sql`r.conv_id`, kind: 'revoked', seq: sql`r.seq`, toSeq: sql`r.seq` })} as notified
        from r`);
    await recordChanges(tx, [{ convId, kind: 'revoked', fromSeq: seq, toSeq: seq, userId: null, subjectId: null }]);
    return { kind: 'revoked', message: toMessageRow(updated[0]!) };
  });
}
