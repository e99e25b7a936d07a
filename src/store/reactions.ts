/**
 * Reactions: one row per (message, reaction, user). Adding and removing
 * lock the message row, so the limit of distinct reactions holds under
 * concurrent calls and a revoke (which deletes them) takes its turn. A
 * change records a `reactions_changed` entry and is announced once
 * committed. Reads are batched: a page's groups are one statement.
 */
import { sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageReactions, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import { MAX_REACTIONS_PER_MESSAGE } from '../history/reaction.ts';
import { amongConversations } from './batchConversations.ts';
import { recordChanges } from './changes.ts';
import type { MessageKey } from './messages.ts';
import type { Publisher } from './notify.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  type ActorMessageValues,
  actorMessage,
  bareList,
  keyValues,
  type KeyValues,
  messageColumns,
  type RetentionClock,
  retentionValues,
} from './sqlFragments.ts';
import { statement } from './statement.ts';

/** What adding or removing a reaction did; `changed` false: it was already so. */
export type ReactionOutcome =
  | { kind: 'done'; message: MessageRow; changed: boolean }
  | NotFound
  | { kind: 'revoked' }
  | { kind: 'too-many'; max: number };

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const r = alias(messageReactions, 'r');

interface ReactionValues {
  actorId: string;
  convId: string;
  seq: number;
  reaction: string;
}

/** The message as the actor sees it, its distinct reactions and whether the actor's is among them, locked. */
const lockForReaction = statement<ReactionValues & ActorMessageValues>(
  (v) => sql`select ${messageColumns(m)},
          (select count(distinct ${r.reaction})::int from ${messageReactions} ${r} where ${r.convId} = ${v.convId} and ${r.seq} = ${m.seq}) as distinct_count,
          exists (select 1 from ${messageReactions} ${r} where ${r.convId} = ${v.convId} and ${r.seq} = ${m.seq} and ${r.reaction} = ${v.reaction}) as used,
          exists (select 1 from ${messageReactions} ${r} where ${r.convId} = ${v.convId} and ${r.seq} = ${m.seq}
            and ${r.reaction} = ${v.reaction} and ${r.userId} = ${v.actorId}) as mine
        ${actorMessage(mb, c, m, v)}
        for update of ${m}`,
);

const insertReaction = statement<ReactionValues>(
  (v) => sql`insert into ${messageReactions} (${bareList(messageReactions.convId, messageReactions.seq, messageReactions.reaction, messageReactions.userId)})
      values (${v.convId}, ${v.seq}, ${v.reaction}, ${v.actorId}) on conflict do nothing`,
);

const deleteReaction = statement<ReactionValues>(
  (v) => sql`delete from ${messageReactions} where ${messageReactions.convId} = ${v.convId} and ${messageReactions.seq} = ${v.seq}
      and ${messageReactions.reaction} = ${v.reaction} and ${messageReactions.userId} = ${v.actorId}`,
);

/**
 * Adds (`add`) or removes `actorId`'s `reaction` (already validated) on
 * message `key`, which they must be able to read. Idempotent both ways; a
 * change is handed to `publisher` once committed.
 */
export async function setReaction(
  db: SqlRunner,
  publisher: Publisher,
  actorId: string,
  key: MessageKey,
  reaction: string,
  add: boolean,
  retention: RetentionClock,
): Promise<ReactionOutcome> {
  const { convId, seq } = key;
  const values = { actorId, convId, seq, reaction };
  const outcome = await db.transaction(async (tx): Promise<ReactionOutcome | { kind: 'committed'; message: MessageRow; changeSeq: number }> => {
    const [found] = await tx.rows<MessageRow & { distinct_count: number; used: boolean; mine: boolean }>(
      lockForReaction({ ...values, ...retentionValues(retention) }),
    );
    if (found === undefined) return NOT_FOUND;
    const message = messageRowOf(found);
    if (add && found.revokedAt !== null) return { kind: 'revoked' };
    if (found.mine === add) return { kind: 'done', message, changed: false };
    if (add && !found.used && found.distinct_count >= MAX_REACTIONS_PER_MESSAGE) return { kind: 'too-many', max: MAX_REACTIONS_PER_MESSAGE };
    await tx.rows(add ? insertReaction(values) : deleteReaction(values));
    const [entry] = await recordChanges(tx, [{ convId, kind: 'reactions_changed', fromSeq: seq, toSeq: seq, userId: null, subjectId: null }]);
    return { kind: 'committed', message, changeSeq: entry!.changeSeq };
  });
  if (outcome.kind !== 'committed') return outcome;
  publisher.publish([{ convId, kind: 'reacted', seq, toSeq: seq, userId: null, changeSeq: outcome.changeSeq }]);
  return { kind: 'done', message: outcome.message, changed: true };
}

/** One reaction on one message as a viewer sees it. */
export interface ReactionGroupRow extends MessageKey {
  reaction: string;
  count: number;
  reactedByMe: boolean;
}

/** The batch's conversations bound on the reactions, so it reads their shards alone (batchConversations.ts). */
const groups = statement<KeyValues & { viewerId: string }>(
  (v) => sql`select k.ord, ${r.reaction} as reaction, count(*)::int as count, bool_or(${r.userId} = ${v.viewerId}) as mine
      from unnest(${v.keyConvIds}::uuid[], ${v.keySeqs}::int8[]) with ordinality as k(conv_id, seq, ord)
      join ${messageReactions} ${r} on ${r.convId} = k.conv_id and ${r.seq} = k.seq and ${amongConversations(r.convId, v.convIds)}
      group by k.ord, ${r.reaction}
      order by k.ord, min(${r.createdAt}), ${r.reaction}`,
);

/**
 * For each of `keys`, in order, its reactions in order of first use, as
 * `viewerId` sees them (`reactedByMe`), in one statement. Callers pass
 * messages the viewer may see.
 */
export async function findReactionGroups(db: SqlRunner, viewerId: string, keys: readonly MessageKey[]): Promise<ReactionGroupRow[][]> {
  if (keys.length === 0) return [];
  const rows = await db.rows<{ ord: number; reaction: string; count: number; mine: boolean }>(
    groups({ ...keyValues(keys), viewerId }),
  );
  const answer: ReactionGroupRow[][] = keys.map(() => []);
  for (const row of rows) {
    const key = keys[Number(row.ord) - 1]!;
    answer[Number(row.ord) - 1]!.push({ convId: key.convId, seq: key.seq, reaction: row.reaction, count: row.count, reactedByMe: row.mine });
  }
  return answer;
}

/** A user who reacted, and where they are in the group's order. */
export interface ReactorRow {
  userId: string;
  /** When they reacted, in microseconds since the epoch: the list's order, with the user id. */
  reactedMicros: number;
}

/** One request for a page of a group's users, after `after` (null: from the first), up to `limit` rows. */
export interface ReactorsRequest extends MessageKey {
  reaction: string;
  after: ReactorRow | null;
  limit: number;
}

/** The batch's conversations bound on the reactions, as in `groups`. */
const reactors = statement<KeyValues & { reactions: string[]; afterMicros: number[]; afterUsers: string[]; limits: number[] }>(
  (v) => sql`select k.ord, x.user_id as "userId", x.micros as "reactedMicros"
      from unnest(${v.keyConvIds}::uuid[], ${v.keySeqs}::int8[], ${v.reactions}::text[], ${v.afterMicros}::int8[], ${v.afterUsers}::text[], ${v.limits}::int4[])
        with ordinality as k(conv_id, seq, reaction, after_micros, after_user, lim, ord)
      cross join lateral (
        select ${r.userId} as user_id, (extract(epoch from ${r.createdAt}) * 1000000)::int8 as micros from ${messageReactions} ${r}
        where ${r.convId} = k.conv_id and ${amongConversations(r.convId, v.convIds)} and ${r.seq} = k.seq and ${r.reaction} = k.reaction
          and ((extract(epoch from ${r.createdAt}) * 1000000)::int8, ${r.userId}) > (k.after_micros, k.after_user)
        order by 2, 1 limit k.lim) x
      order by k.ord, x.micros, x.user_id`,
);

/** For each request, in order, its page of users in the order they reacted; one statement for all. */
export async function findReactors(db: SqlRunner, requests: readonly ReactorsRequest[]): Promise<ReactorRow[][]> {
  if (requests.length === 0) return [];
  const rows = await db.rows<ReactorRow & { ord: number }>(
    reactors({
      ...keyValues(requests),
      reactions: requests.map((q) => q.reaction),
      afterMicros: requests.map((q) => q.after?.reactedMicros ?? -1),
      afterUsers: requests.map((q) => q.after?.userId ?? ''),
      limits: requests.map((q) => q.limit),
    }),
  );
  const pages: ReactorRow[][] = requests.map(() => []);
  for (const row of rows) pages[Number(row.ord) - 1]!.push({ userId: row.userId, reactedMicros: Number(row.reactedMicros) });
  return pages;
}
