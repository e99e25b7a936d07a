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
import { fanOutActivity, fanOutActivityOfMany } from './inboxIndex.ts';
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

interface BatchToOneValues {
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
 * top's last ones in that order. One row lock, one commit flush. Its
 * conversation is bound, so it routes to that conversation's shard alone.
 */
const sendBatchToOne = statement<BatchToOneValues>(
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

interface BatchToManyValues extends Omit<BatchToOneValues, 'convId'> {
  /** The distinct conversations of the batch, named on `conversations` and on the members the inbox step reads. */
  convIds: string[];
  /** Each send's conversation, sorted. */
  sendConvIds: string[];
}

/**
 * Sends to several conversations as one statement: the send
 * statement's steps, once, for every request whose sender is a member
 * (`sent`, numbered per conversation in request order), each conversation's
 * counter moved by its number, their seqs its new top's last ones in that
 * order. One commit flush for all of them.
 *
 * The conversations' row locks are taken in conversation id order (both
 * sides of the update's join come in that order: `counts` sorted, and the
 * index scan of `= any`, which reads its keys sorted): two batches sharing
 * conversations, in two server processes, wait for each other rather than
 * deadlock. The conversations are named on `conversations` and on the
 * members the inbox step reads, so those prune to their shards; each
 * sender's membership is probed by its own key (see below), which prunes
 * nothing at plan time.
 */
const sendBatchToMany = statement<BatchToManyValues>(
  (v) => sql`with sent as (
          select s.conv_id, s.sender_id, s.client_msg_id, s.text, s.search_terms, s.reply_to_seq, s.thread_root_seq,
                 row_number() over (partition by s.conv_id order by s.n) as k
          from unnest(${v.sendConvIds}::uuid[], ${v.senderIds}::text[], ${v.clientMsgIds}::text[], ${v.texts}::text[], ${v.searchTerms}::tsvector[],
                      ${v.replyToSeqs}::int8[], ${v.threadRootSeqs}::int8[])
            with ordinality as s(conv_id, sender_id, client_msg_id, text, search_terms, reply_to_seq, thread_root_seq, n)
          -- Each sender's membership probed by its key (a lateral subquery
          -- with a limit stays a per-row probe): as a join or an IN, the plan
          -- read every member of the batch's conversations (all 10,000 of a
          -- large group's), or every membership of a sender.
          cross join lateral (
            select from ${members} ${mb}
            where ${mb.convId} = s.conv_id and ${mb.userId} = s.sender_id
            limit 1) member),
        counts as (select conv_id, count(*) as n from sent group by conv_id order by conv_id),
        ${conv} as (
          update ${conversations} ${c} set ${bare(c.maxSeq)} = ${c.maxSeq} + counts.n,
            ${bare(c.lastActivityAt)} = greatest(${c.lastActivityAt}, now())
          from counts
          where ${c.id} = any(${v.convIds}::uuid[]) and ${c.id} = counts.conv_id
          returning ${c.id}, ${c.maxSeq}, ${c.lastActivityAt}, ${c.large}, counts.n),
        inboxed as (${fanOutActivityOfMany(conv, sql`${v.convIds}::uuid[]`)}),
        ${m} as (
          insert into ${messages} (${bareList(messages.convId, messages.seq, messages.senderId, messages.clientMsgId, messages.createdAt, messages.replyToSeq, messages.threadRootSeq)})
          select ${conv.id}, ${conv.maxSeq} - ${conv}.n + sent.k, sent.sender_id, sent.client_msg_id, ${conv.lastActivityAt}, sent.reply_to_seq, sent.thread_root_seq
          from ${conv} join sent on sent.conv_id = ${conv.id}
          returning *),
        body as (
          insert into ${messageBodies} (${bareList(messageBodies.convId, messageBodies.seq, messageBodies.text, messageBodies.searchTerms)})
          select ${m.convId}, ${m.seq}, sent.text, sent.search_terms
          from ${m} join sent on sent.conv_id = ${m.convId} and sent.sender_id = ${m.senderId} and sent.client_msg_id = ${m.clientMsgId})
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

/** The live event of a stored message. */
const sentEvent = (message: MessageRow) => ({ convId: message.convId, kind: 'sent' as const, seq: message.seq, toSeq: message.seq, userId: null, changeSeq: null });

/** A send `sendTogether` stores: one that mentions no one, and its conversation. */
export interface PlainSendTo extends Omit<SendRequest, 'mentions'> {
  convId: string;
}

/** One send's key among a batch's: sender and client id are unique in a conversation. */
const sendKey = (convId: string, senderId: string, clientMsgId: string) => `${convId}\u0000${senderId}\u0000${clientMsgId}`;

/** Orders by conversation id: the order a batch's row locks are taken in. */
const byConversation = (a: { convId: string }, b: { convId: string }) => (a.convId < b.convId ? -1 : a.convId > b.convId ? 1 : 0);

/** Each send of a batch, as parallel arrays. */
type EachSend = Omit<BatchToOneValues, 'convId'>;

/** The rows of `sendBatchToOne`: the sends of `each`, all to `convId`. */
function storeInOne(db: SqlRunner, convId: string, each: EachSend): Promise<(MessageRow & { clientMsgId: string })[]> {
  return db.rows(sendBatchToOne({ convId, ...each }));
}

/** The rows of `sendBatchToMany`: the sends of `each`, to `sendConvIds` (sorted), whose distinct ids are `convIds`. */
function storeAcross(db: SqlRunner, convIds: string[], sendConvIds: string[], each: EachSend): Promise<(MessageRow & { clientMsgId: string })[]> {
  return db.rows(sendBatchToMany({ convIds, sendConvIds, ...each }));
}

/**
 * Stores `sends` (to one conversation or several) in one statement, seqs in
 * their order within each conversation, and hands the stored ones to
 * `publisher` once committed; answers each one's outcome in the same order
 * (`NotFound` for a sender who is not a member). Throws if the statement
 * fails, storing none of them: a retry among them meeting its first copy,
 * for one. The caller then stores each alone, with `sendMessage`, for its
 * own answer.
 */
export async function sendTogether(db: SqlRunner, publisher: Publisher, sends: readonly PlainSendTo[]): Promise<SendOutcome[]> {
  // By conversation, stable within one: the order the row locks are taken in (see sendBatchToMany).
  const ordered = [...sends].sort(byConversation);
  const convIds = [...new Set(ordered.map((s) => s.convId))];
  const each: EachSend = {
    senderIds: ordered.map((s) => s.senderId),
    clientMsgIds: ordered.map((s) => s.clientMsgId),
    texts: ordered.map((s) => s.text),
    searchTerms: ordered.map((s) => searchVector(s.convId, s.text)),
    replyToSeqs: ordered.map((s) => s.reply?.replyToSeq ?? null),
    threadRootSeqs: ordered.map((s) => s.reply?.threadRootSeq ?? null),
  };
  const rows = convIds.length === 1 ? await storeInOne(db, convIds[0]!, each) : await storeAcross(db, convIds, ordered.map((s) => s.convId), each);
  const stored = new Map(rows.map((row) => [sendKey(row.convId, row.senderId, row.clientMsgId), messageRowOf(row)] as const));
  const messages = [...stored.values()].sort((a, b) => byConversation(a, b) || a.seq - b.seq);
  publisher.publish(messages.map(sentEvent));
  return sends.map((s): SendOutcome => {
    const message = stored.get(sendKey(s.convId, s.senderId, s.clientMsgId));
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
