/**
 * Sending: one statement bumps the conversation's counter (under its row
 * lock), inserts the index row, the body and the mentions, and moves the
 * conversation up its members' inboxes. Because the seq is allocated in
 * the statement that stores the message, a send that fails leaves no hole,
 * and the row lock is held for a single round trip. The send is announced
 * after it commits (notify.ts says why not inside).
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { searchVector } from '../history/searchText.ts';
import { fanOutActivity } from './inboxIndex.ts';
import { insertMentions } from './mentions.ts';
import type { Publisher } from './notify.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { isUniqueViolation, type MessageRow, messageRowOf } from './rows.ts';
import { bare, bareList, messageColumns } from './sqlFragments.ts';
import { statement } from './statement.ts';

/** What a send did; `NotFound` when the sender is not a member (or there is no such conversation). */
export type SendOutcome = { kind: 'stored'; message: MessageRow } | { kind: 'deduplicated'; message: MessageRow } | NotFound;

const c = alias(conversations, 'c');
const mb = alias(members, 'mb');
/** The message stored, and (in the send statement) the CTE of its `returning *`. */
const m = alias(messages, 'm');
/** The CTE of the bumped conversation: the columns it returns. */
const conv = alias(conversations, 'conv');

const firstCopy = statement<{ convId: string; senderId: string; clientMsgId: string }>(
  (v) => sql`select ${messageColumns(m)} from ${messages} ${m}
      where ${m.convId} = ${v.convId} and ${m.senderId} = ${v.senderId} and ${m.clientMsgId} = ${v.clientMsgId}`,
);

/** The message the sender already stored under `clientMsgId`, if any (whatever anyone may see of it now). */
export async function findByClientId(db: SqlRunner, convId: string, senderId: string, clientMsgId: string): Promise<MessageRow | null> {
  const [row] = await db.rows<MessageRow>(firstCopy({ convId, senderId, clientMsgId }));
  return row ?? null;
}

interface SendValues {
  convId: string;
  senderId: string;
  clientMsgId: string;
  text: string;
  searchTerms: string;
  replyToSeq: number | null;
  threadRootSeq: number | null;
  mentionUserIds: string[];
  mentionEveryone: boolean;
}

/**
 * The send statement; `mentioning`: with the insert of its mentions. Two
 * prepared statements, so a send that mentions no one (nearly all) runs
 * exactly the statement it ran before mentions existed.
 */
const sendStatement = (mentioning: boolean) => statement<SendValues>(
  (v) => sql`with ${conv} as (
          update ${conversations} ${c} set ${bare(c.maxSeq)} = ${c.maxSeq} + 1, ${bare(c.lastActivityAt)} = greatest(${c.lastActivityAt}, now())
          where ${c.id} = ${v.convId}
            and exists (select 1 from ${members} ${mb} where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.senderId})
          returning ${c.id}, ${c.maxSeq}, ${c.lastActivityAt}, ${c.large}),
        -- The members' inbox rows follow the activity, under the same row lock
        -- (none for a large conversation: src/store/inboxIndex.ts).
        inboxed as (${fanOutActivity(conv, v.convId)}),
        ${m} as (
          -- Stamped under the row lock and never before the previous message,
          -- so creation time follows seq (retention and messagesAt rely on it).
          insert into ${messages} (${bareList(messages.convId, messages.seq, messages.senderId, messages.clientMsgId, messages.createdAt, messages.replyToSeq, messages.threadRootSeq)})
          select ${conv.id}, ${conv.maxSeq}, ${v.senderId}, ${v.clientMsgId}, ${conv.lastActivityAt}, ${v.replyToSeq}::int8, ${v.threadRootSeq}::int8 from ${conv}
          returning *),
        ${mentioning ? sql`mentioned as (${insertMentions(m, v.convId, v.mentionUserIds, sql`${v.mentionEveryone}::boolean`)}),` : sql``}
        -- The search index entry is the body row's own column: in step by construction.
        body as (
          insert into ${messageBodies} (${bareList(messageBodies.convId, messageBodies.seq, messageBodies.text, messageBodies.searchTerms)})
          select ${m.convId}, ${m.seq}, ${v.text}, ${v.searchTerms}::tsvector from ${m})
        select ${messageColumns(m)} from ${m}`,
);

const send = sendStatement(false);
const sendMentioning = sendStatement(true);

/** What a reply points at: the message it answers and its thread's root (both earlier seqs of the same conversation). */
export interface ReplyTarget {
  replyToSeq: number;
  threadRootSeq: number;
}

/** Who a message mentions: members named (checked as members beforehand), and everyone. */
export interface MentionsToStore {
  userIds: readonly string[];
  everyone: boolean;
}

const NO_MENTIONS: MentionsToStore = { userIds: [], everyone: false };

/**
 * Stores a message from `senderId`, or returns the one already stored under
 * the same `clientMsgId` (a retry). Text must already be validated, and a
 * reply's target checked as one the sender may answer. A stored message is
 * handed to `publisher` once committed; a retry announces nothing.
 */
export async function sendMessage(
  db: SqlRunner,
  publisher: Publisher,
  senderId: string,
  convId: string,
  clientMsgId: string,
  text: string,
  reply: ReplyTarget | null = null,
  mentions: MentionsToStore = NO_MENTIONS,
): Promise<SendOutcome> {
  let rows: MessageRow[];
  try {
    const mentioning = mentions.userIds.length > 0 || mentions.everyone;
    rows = await db.rows<MessageRow>(
      (mentioning ? sendMentioning : send)({
        convId,
        senderId,
        clientMsgId,
        text,
        searchTerms: searchVector(convId, text),
        replyToSeq: reply?.replyToSeq ?? null,
        threadRootSeq: reply?.threadRootSeq ?? null,
        mentionUserIds: [...mentions.userIds],
        mentionEveryone: mentions.everyone,
      }),
    );
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
  const message = messageRowOf(row);
  publisher.publish([{ convId: message.convId, kind: 'sent', seq: message.seq, toSeq: message.seq, userId: null, changeSeq: null }]);
  return { kind: 'stored', message };
}
