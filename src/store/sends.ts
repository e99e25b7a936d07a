/**
 * Sending: one statement bumps the conversation's counter (under its row
 * lock), inserts the index row and the body. Because the seq is allocated in
 * the statement that stores the message, a send that fails leaves no hole,
 * and the row lock is held for a single round trip.
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { searchVector } from '../history/searchText.ts';
import { notifyExpression } from './notify.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { isUniqueViolation, type MessageRow, type RawMessageRow, toMessageRow } from './rows.ts';
import { messageColumns } from './sqlFragments.ts';

/** What a send did; `NotFound` when the sender is not a member (or there is no such conversation). */
export type SendOutcome = { kind: 'stored'; message: MessageRow } | { kind: 'deduplicated'; message: MessageRow } | NotFound;

/** The message the sender already stored under `clientMsgId`, if any. */
async function findByClientId(
  db: SqlRunner,
  convId: string,
  senderId: string,
  clientMsgId: string,
): Promise<MessageRow | null> {
  const rows = await db.rows<RawMessageRow>(sql`select ${messageColumns('m')} from messages m
      where m.conv_id = ${convId} and m.sender_id = ${senderId} and m.client_msg_id = ${clientMsgId}`);
  return rows[0] ? toMessageRow(rows[0]) : null;
}

/**
 * Stores a message from `senderId`, or returns the one already stored under
 * the same `clientMsgId` (a retry). Text must already be validated.
 */
export async function sendMessage(
  db: SqlRunner,
  senderId: string,
  convId: string,
  clientMsgId: string,
  text: string,
): Promise<SendOutcome> {
  let rows: RawMessageRow[];
  try {
    rows = await db.rows<RawMessageRow>(sql`with conv as (
          update conversations c set max_seq = c.max_seq + 1, last_activity_at = greatest(c.last_activity_at, now())
          where c.id = ${convId}
            and exists (select 1 from members mb where mb.conv_id = ${convId} and mb.user_id = ${senderId})
          returning c.id, c.max_seq, c.last_activity_at),
        m as (
          -- Stamped under the row lock and never before the previous message,
          -- so creation time follows seq (retention and messagesAt rely on it).
          insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
          select id, max_seq, ${senderId}, ${clientMsgId}, last_activity_at from conv
          returning *),
        -- The search index entry is the body row's own column: in step by construction.
        body as (
          insert into message_bodies (conv_id, seq, text, search_terms)
          select conv_id, seq, ${text}, ${searchVector(convId, text)}::tsvector from m)
        -- Announced at commit, ids only; a deduplicated retry rolls back and announces nothing.
        select ${messageColumns('m')}, ${notifyExpression({ convId: sql`m.conv_id`, kind: 'sent', seq: sql`m.seq`, toSeq: sql`m.seq` })} as notified
        from m`);
  } catch (error) {
    // A retry racing (or following) the first copy: the statement rolled back
    // whole, so no seq was used; answer with the first copy.
    if (!isUniqueViolation(error)) throw error;
    const existing = await findByClientId(db, convId, senderId, clientMsgId);
    if (existing === null) throw error;
    return { kind: 'deduplicated', message: existing };
  }
  const row = rows[0];
  if (row === undefined) return NOT_FOUND;
  return { kind: 'stored', message: toMessageRow(row) };
}
