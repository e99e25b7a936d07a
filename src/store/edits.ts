/**
 * Editing: the sender replaces a message's text. One transaction locks the
 * message, keeps the text it had as the next version of `message_edits`,
 * writes the new text and its search vector into the body row, stamps
 * `edited_at` and records an `edited` change; the edit is announced once
 * it has committed. Reads of earlier versions are batched for a page.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageBodies, messageEdits, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { decideEdit, type EditDecision } from '../history/editRule.ts';
import { searchVector } from '../history/searchText.ts';
import { amongConversations } from './batchConversations.ts';
import { recordChanges } from './changes.ts';
import type { Publisher } from './notify.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  type ActorMessageValues,
  actorMessage,
  bare,
  bareList,
  isoTime,
  keyValues,
  type KeyValues,
  messageColumns,
  type RetentionClock,
  retentionValues,
  selectList,
} from './sqlFragments.ts';
import { statement } from './statement.ts';
import type { MessageKey } from './messages.ts';

/** What an edit did. */
export type EditOutcome =
  | { kind: 'edited'; message: MessageRow }
  | { kind: 'unchanged'; message: MessageRow }
  | NotFound
  | { kind: 'forbidden'; reason: Exclude<EditDecision, { allowed: true }>['reason'] };

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const b = alias(messageBodies, 'b');
const e = alias(messageEdits, 'e');
/** The CTE of the edited index row: `returning *` of `messages`. */
const u = alias(messages, 'u');

interface EditValues {
  actorId: string;
  convId: string;
  seq: number;
}

/** The message as the actor sees it, its current text (null: none warm) and what the rule needs, locked so edits and revokes take turns. */
const lockForEdit = statement<ActorMessageValues>(
  (v) => sql`select ${messageColumns(m)}, ${m.erasedAt} is not null as erased,
          (select ${b.text} from ${messageBodies} ${b} where ${b.convId} = ${v.convId} and ${b.seq} = ${m.seq}) as body_text,
          (extract(epoch from ${m.createdAt}) * 1000)::float8 as created_ms,
          (extract(epoch from now()) * 1000)::float8 as now_ms
        ${actorMessage(mb, c, m, v)}
        for update of ${m}`,
);

/** Keeps the current text as the next version, writes the new one, stamps the row. */
const edit = statement<EditValues & { text: string; searchTerms: string }>(
  (v) => sql`with kept as (
          insert into ${messageEdits} (${bareList(messageEdits.convId, messageEdits.seq, messageEdits.version, messageEdits.text, messageEdits.editedAt)})
          select ${b.convId}, ${b.seq},
            coalesce((select max(${e.version}) from ${messageEdits} ${e} where ${e.convId} = ${v.convId} and ${e.seq} = ${b.seq}), 0) + 1,
            ${b.text}, now()
          from ${messageBodies} ${b} where ${b.convId} = ${v.convId} and ${b.seq} = ${v.seq}),
        body as (
          update ${messageBodies} set ${bare(messageBodies.text)} = ${v.text}, ${bare(messageBodies.searchTerms)} = ${v.searchTerms}::tsvector
          where ${messageBodies.convId} = ${v.convId} and ${messageBodies.seq} = ${v.seq}),
        ${u} as (
          update ${messages} set ${bare(messages.editedAt)} = now()
          where ${messages.convId} = ${v.convId} and ${messages.seq} = ${v.seq}
          returning *)
        select ${messageColumns(u)} from ${u}`,
);

/**
 * Replaces the text of message `seq` of `convId` with `text` (already
 * validated) on behalf of `actorId`, if the rules allow; the same text as
 * now changes nothing. An edit is handed to `publisher` once committed.
 */
export async function editMessage(
  db: SqlRunner,
  publisher: Publisher,
  actorId: string,
  key: MessageKey,
  text: string,
  windowSeconds: number | null,
  retention: RetentionClock,
): Promise<EditOutcome> {
  const { convId, seq } = key;
  const outcome = await db.transaction(async (tx): Promise<EditOutcome | { kind: 'committed'; message: MessageRow; changeSeq: number }> => {
    const [found] = await tx.rows<MessageRow & { erased: boolean; body_text: string | null; created_ms: number; now_ms: number }>(
      lockForEdit({ actorId, convId, seq, ...retentionValues(retention) }),
    );
    if (found === undefined) return NOT_FOUND;
    const decision = decideEdit({
      actorId,
      senderId: found.senderId,
      revoked: found.revokedAt !== null,
      erased: found.erased,
      archived: found.body_text === null,
      createdAtMs: found.created_ms,
      nowMs: found.now_ms,
      windowSeconds,
    });
    if (!decision.allowed) return { kind: 'forbidden', reason: decision.reason };
    if (found.body_text === text) return { kind: 'unchanged', message: messageRowOf(found) };
    const [updated] = await tx.rows<MessageRow>(edit({ actorId, convId, seq, text, searchTerms: searchVector(convId, text) }));
    const [entry] = await recordChanges(tx, [{ convId, kind: 'edited', fromSeq: seq, toSeq: seq, userId: null, subjectId: null }]);
    return { kind: 'committed', message: messageRowOf(updated!), changeSeq: entry!.changeSeq };
  });
  if (outcome.kind !== 'committed') return outcome;
  publisher.publish([{ convId, kind: 'edited', seq, toSeq: seq, userId: null, changeSeq: outcome.changeSeq }]);
  return { kind: 'edited', message: outcome.message };
}

/** One earlier version of a message's text. */
export interface EditRow {
  version: number;
  text: string;
  /** When it was replaced; ISO 8601, UTC. */
  editedAt: string;
}

/** One request for a page of a message's versions: newest first, below `beforeVersion` (null: from the newest). */
export interface EditsRequest extends MessageKey {
  beforeVersion: number | null;
  /** The page size plus one. */
  limit: number;
}

/** The batch's conversations bound on the versions, so it reads their shards alone (batchConversations.ts). */
const editPages = statement<KeyValues & { befores: number[]; limits: number[] }>(
  (v) => sql`select k.ord, ${selectList<EditRow>({ version: e.version, text: e.text, editedAt: isoTime(e.editedAt) })}
      from unnest(${v.keyConvIds}::uuid[], ${v.keySeqs}::int8[], ${v.befores}::int4[], ${v.limits}::int4[])
        with ordinality as k(conv_id, seq, before_version, lim, ord)
      cross join lateral (select * from ${messageEdits} ${e}
        where ${e.convId} = k.conv_id and ${amongConversations(e.convId, v.convIds)} and ${e.seq} = k.seq and ${e.version} < k.before_version
        order by ${e.version} desc limit k.lim) ${e}
      order by k.ord, ${e.version} desc`,
);

/**
 * For each request, in order, its page of earlier versions (up to `limit`
 * rows, newest first), all in one statement. Callers pass messages the
 * viewer may see; a revoked, erased or purged message has none left.
 */
export async function findEdits(db: SqlRunner, requests: readonly EditsRequest[]): Promise<EditRow[][]> {
  if (requests.length === 0) return [];
  const rows = await db.rows<EditRow & { ord: number }>(
    editPages({
      ...keyValues(requests),
      befores: requests.map((r) => r.beforeVersion ?? 2_147_483_647),
      limits: requests.map((r) => r.limit),
    }),
  );
  const pages: EditRow[][] = requests.map(() => []);
  for (const row of rows) pages[Number(row.ord) - 1]!.push({ version: row.version, text: row.text, editedAt: row.editedAt });
  return pages;
}
