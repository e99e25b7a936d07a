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

interface BatchValues {
  convId: string;
  senderIds: string[];
  clientMsgIds: string[];
  texts: string[];
  searchTerms: string[];
  replyToSeqs: (number | null)[];
  threadRootSeqs: (number | null)[];
}

/**
 * Several sends to one conversation as one statement: the send statement's
 * steps, once, for every request whose sender is a member (`sent`, numbered
 * in request order), the counter moved by their number, their seqs the new
 * top's last ones in that order. One row lock, one commit flush.
 */
const sendBatch = statement<BatchValues>(
  (v) => sql`with sent as (
          select s.sender_id, s.client_msg_id, s.text, s.search_terms, s.reply_to_seq, s.thread_root_seq,
                 row_number() over (order by s.n) as k
          from unnest(${v.senderIds}::text[], ${v.clientMsgIds}::text[], ${v.texts}::text[], ${v.searchTerms}::tsvector[],
                      ${v.replyToSeqs}::int8[], ${v.threadRootSeqs}::int8[])
            with ordinality as s(sender_id, client_msg_id, text, search_terms, reply_to_seq, thread_root_seq, n)
          where exists (select 1 from ${members} ${mb} where ${mb.convId} = ${v.convId} and ${mb.userId} = s.sender_id)),
        ${conv} as (
          update ${conversations} ${c} set ${bare(c.maxSeq)} = ${c.maxSeq} + (select count(*) from sent),
            ${bare(c.lastActivityAt)} = greatest(${c.lastActivityAt}, now())
          where ${c.id} = ${v.convId} and exists (select 1 from sent)
          returning ${c.id}, ${c.maxSeq}, ${c.lastActivityAt}, ${c.large}),
        inboxed as (${fanOutActivity(conv, v.convId)}),
        ${m} as (
          insert into ${messages} (${bareList(messages.convId, messages.seq, messages.senderId, messages.clientMsgId, messages.createdAt, messages.replyToSeq, messages.threadRootSeq)})
          select ${conv.id}, ${conv.maxSeq} - (select count(*) from sent) + sent.k, sent.sender_id, sent.client_msg_id, ${conv.lastActivityAt}, sent.reply_to_seq, sent.thread_root_seq
          from ${conv} cross join sent
          returning *),
        body as (
          insert into ${messageBodies} (${bareList(messageBodies.convId, messageBodies.seq, messageBodies.text, messageBodies.searchTerms)})
          select ${m.convId}, ${m.seq}, sent.text, sent.search_terms
          from ${m} join sent on sent.sender_id = ${m.senderId} and sent.client_msg_id = ${m.clientMsgId})
        select ${messageColumns(m)}, ${m.clientMsgId} as "clientMsgId" from ${m}`,
);

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

/** Whether a send mentions anyone: then its statement also writes the mentions, and it is stored alone. */
export function mentionsAnyone(mentions: MentionsToStore): boolean {
  return mentions.userIds.length > 0 || mentions.everyone;
}

/** One message to store, by `sendMessage` or together with others to the same conversation. */
export interface SendRequest {
  senderId: string;
  clientMsgId: string;
  text: string;
  reply: ReplyTarget | null;
  mentions: MentionsToStore;
}

/** A send `sendTogether` can store: one that mentions no one. */
export type PlainSend = Omit<SendRequest, 'mentions'>;

/** The live event of a stored message. */
const sentEvent = (message: MessageRow) => ({ convId: message.convId, kind: 'sent' as const, seq: message.seq, toSeq: message.seq, userId: null, changeSeq: null });

/**
 * Stores `sends` to conversation `convId` in one statement, seqs in their
 * order, and hands the stored ones to `publisher` once committed; answers
 * each one's outcome in the same order (`NotFound` for a sender who is not
 * a member). Throws if the statement fails, storing none of them: a retry
 * among them meeting its first copy, for one. The caller then stores each
 * alone, with `sendMessage`, for its own answer.
 */
export async function sendTogether(db: SqlRunner, publisher: Publisher, convId: string, sends: readonly PlainSend[]): Promise<SendOutcome[]> {
  const rows = await db.rows<MessageRow & { clientMsgId: string }>(
    sendBatch({
      convId,
      senderIds: sends.map((s) => s.senderId),
      clientMsgIds: sends.map((s) => s.clientMsgId),
      texts: sends.map((s) => s.text),
      searchTerms: sends.map((s) => searchVector(convId, s.text)),
      replyToSeqs: sends.map((s) => s.reply?.replyToSeq ?? null),
      threadRootSeqs: sends.map((s) => s.reply?.threadRootSeq ?? null),
    }),
  );
  const stored = new Map(rows.map((row) => [`${row.senderId}\u0000${row.clientMsgId}`, messageRowOf(row)] as const));
  const messages = [...stored.values()].sort((a, b) => a.seq - b.seq);
  publisher.publish(messages.map(sentEvent));
  return sends.map((s): SendOutcome => {
    const message = stored.get(`${s.senderId}\u0000${s.clientMsgId}`);
    return message === undefined ? NOT_FOUND : { kind: 'stored', message };
  });
}

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
    rows = await db.rows<MessageRow>(
      (mentionsAnyone(mentions) ? sendMentioning : send)({
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
  publisher.publish([sentEvent(message)]);
  return { kind: 'stored', message };
}
