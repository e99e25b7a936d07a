/**
 * Mentions: who a message names, and the viewer's list of the messages that
 * name them or everyone. The send statement writes the rows (sends.ts); an
 * everyone-mention is ONE row (`user_id` ''), so it costs the same in a group
 * of any size and reaches members who join later: the list merges it in at
 * read time, one index probe per conversation of the viewer. Revokes,
 * purges and erasure delete a message's rows with its text.
 */
import { type Placeholder, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { conversations, members, messageMentions, messages } from '../db/schema.ts';
import type { SqlRunner } from '../db/runner.ts';
import type { MentionPosition } from '../history/listCursors.ts';
import { amongConversations } from './batchConversations.ts';
import { type MessageKey, messageKeyString } from './messages.ts';
import { NOT_FOUND, type NotFound } from './outcome.ts';
import { type MessageRow, messageRowOf } from './rows.ts';
import {
  type Aliased,
  hiddenFrom,
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
import { type Slots, statement } from './statement.ts';
import { beforeTimedStart, epochMicros, timedAfterValues, type TimedAfterValues } from './timedList.ts';

/** The `user_id` of the row that mentions everyone (no user id is empty: src/history/userId.ts). */
const EVERYONE = '';

const m = alias(messages, 'm');
const mb = alias(members, 'mb');
const c = alias(conversations, 'c');
const mm = alias(messageMentions, 'mm');
const other = alias(members, 'x');

/** What the send rules need before a message with mentions is stored. */
export interface MentionFacts {
  kind: 'facts';
  conversationKind: 'direct' | 'group';
  senderRole: 'owner' | 'member';
  /** Those of the ids asked about that are members now. */
  memberIds: string[];
}

const factsOf = statement<{ convId: string; senderId: string; userIds: string[] }>(
  (v) => sql`select ${c.kind} as "conversationKind", ${mb.role} as "senderRole",
        array(select ${other.userId} from ${members} ${other}
          where ${other.convId} = ${v.convId} and ${other.userId} = any(${v.userIds}::text[])) as "memberIds"
      from ${members} ${mb} join ${conversations} ${c} on ${c.id} = ${mb.convId}
      where ${mb.convId} = ${v.convId} and ${mb.userId} = ${v.senderId}`,
);

/** The facts for `senderId` mentioning `userIds` in `convId`; not found when the sender is not a member. */
export async function findMentionFacts(db: SqlRunner, senderId: string, convId: string, userIds: readonly string[]): Promise<MentionFacts | NotFound> {
  const [row] = await db.rows<Omit<MentionFacts, 'kind'>>(factsOf({ convId, senderId, userIds: [...userIds] }));
  return row === undefined ? NOT_FOUND : { kind: 'facts', ...row };
}

/**
 * The send statement's insert of a message's mentions, from `stored` (the
 * CTE of the stored message): each named user who is a member (a user who
 * left since the send was checked is dropped), in the order given, and the
 * everyone row when `everyone`. An empty list inserts nothing. `convId`:
 * the stored message's conversation as the send binds it, so the
 * membership probe is routed by that value, not by the CTE's column.
 */
export function insertMentions(stored: Aliased<typeof messages>, convId: Placeholder, userIds: Placeholder, everyone: SQL): SQL {
  const t = messageMentions;
  return sql`insert into ${t} (${sql.identifier(t.convId.name)}, ${sql.identifier(t.seq.name)}, ${sql.identifier(t.userId.name)},
          ${sql.identifier(t.position.name)}, ${sql.identifier(t.sentAt.name)})
        select ${stored.convId}, ${stored.seq}, u.user_id, u.position, ${stored.createdAt}
          from ${stored} cross join unnest(${userIds}::text[]) with ordinality as u(user_id, position)
          where exists (select 1 from ${members} ${other} where ${other.convId} = ${convId} and ${other.userId} = u.user_id)
        union all
        select ${stored.convId}, ${stored.seq}, ${EVERYONE}, 0, ${stored.createdAt} from ${stored} where ${everyone}`;
}

/** Who one message mentions. */
export interface MessageMentions {
  /** The users it names, in the order the sender gave them. */
  userIds: string[];
  everyone: boolean;
}

/** The batch's conversations bound on the mentions, so it reads their shards alone (batchConversations.ts). */
const mentionsOfKeys = statement<KeyValues>(
  (v) => sql`select ${mm.convId} as "convId", ${mm.seq} as seq, ${mm.userId} as "userId"
      from ${keyArrays(v)} as k(conv_id, seq)
      join ${messageMentions} ${mm} on ${mm.convId} = k.conv_id and ${mm.seq} = k.seq and ${amongConversations(mm.convId, v.convIds)}
      order by ${mm.position}`,
);

/** For each of `keys`, in order, who it mentions; one statement for a page. Callers pass keys the viewer may see. */
export async function findMentions(db: SqlRunner, keys: readonly MessageKey[]): Promise<MessageMentions[]> {
  if (keys.length === 0) return [];
  const byKey = new Map(keys.map((key) => [messageKeyString(key), { userIds: [] as string[], everyone: false }]));
  for (const row of await db.rows<MessageKey & { userId: string }>(mentionsOfKeys(keyValues(keys)))) {
    const mentions = byKey.get(messageKeyString(row))!;
    if (row.userId === EVERYONE) mentions.everyone = true;
    else mentions.userIds.push(row.userId);
  }
  return keys.map((key) => byKey.get(messageKeyString(key))!);
}

/** A message of the viewer's mentions list. */
export interface MentionRow {
  message: MessageRow;
  position: MentionPosition;
  /** It mentions everyone (whether or not it also names the viewer). */
  everyone: boolean;
}

interface MentionPageValues extends RetentionValues, TimedAfterValues {
  viewerId: string;
  limit: number;
}

const MICROS = epochMicros(mm.sentAt);

/** The mention rows `mm` of `m` the viewer may see: not theirs, not revoked or erased, above their floor, not hidden from them, before the cursor. */
function seenBy(v: Slots<MentionPageValues>): SQL {
  return sql`${m.senderId} <> ${v.viewerId} and ${m.revokedAt} is null and ${m.erasedAt} is null
    and ${visibleTo(m, v.viewerId, visibleFloor(mb, c, v))}
    and ${beforeTimedStart(mm.sentAt, mm.convId, mm.seq, v)}`;
}

/**
 * Two runs, each cut at the page's size, merged and cut again: the
 * viewer's own mentions in time order from `message_mentions_user_time_idx`
 * (stopping once the page is full of visible ones), and each of their
 * conversations' everyone-mentions, newest first from
 * `message_mentions_user_conv_idx`. In a conversation seq order is time
 * order (sends stamp `created_at` no earlier than the previous message), so
 * that run's seq order is the list's order. The page's top rows are within
 * each run's top rows, so the merge loses none; a message in both runs is
 * one entry.
 */
const mentionPage = statement<MentionPageValues>(
  (v) => sql`select ${messageColumns(m)}, hit.sent_micros, hit.everyone
      from (select conv_id, seq, max(sent_micros) as sent_micros, bool_or(everyone) as everyone
        from (
          (select ${mm.convId} as conv_id, ${mm.seq} as seq, ${MICROS} as sent_micros, false as everyone
            from ${messageMentions} ${mm}
            join ${members} ${mb} on ${mb.convId} = ${mm.convId} and ${mb.userId} = ${v.viewerId}
            join ${conversations} ${c} on ${c.id} = ${mm.convId}
            join ${messages} ${m} on ${m.convId} = ${mm.convId} and ${m.seq} = ${mm.seq}
            where ${mm.userId} = ${v.viewerId} and ${seenBy(v)}
            order by ${mm.sentAt} desc, ${mm.convId} desc, ${mm.seq} desc
            limit ${v.limit})
          union all
          select e.* from ${members} ${mb}
            join ${conversations} ${c} on ${c.id} = ${mb.convId}
            cross join lateral (select ${mm.convId} as conv_id, ${mm.seq} as seq, ${MICROS} as sent_micros, true as everyone
              from ${messageMentions} ${mm}
              join ${messages} ${m} on ${m.convId} = ${mm.convId} and ${m.seq} = ${mm.seq}
              where ${mm.userId} = ${EVERYONE} and ${mm.convId} = ${mb.convId} and ${seenBy(v)}
              order by ${mm.seq} desc
              limit ${v.limit}) e
            where ${mb.userId} = ${v.viewerId}
        ) runs
        group by conv_id, seq
        order by 3 desc, 1 desc, 2 desc
        limit ${v.limit}) hit
      join ${messages} ${m} on ${m.convId} = hit.conv_id and ${m.seq} = hit.seq
      order by hit.sent_micros desc, hit.conv_id desc, hit.seq desc`,
);

/**
 * The messages that mention `viewerId` by name or mention everyone in a
 * conversation they are in, that they can see and did not send, newest
 * first, after `after` (null: from the newest), up to `limit`, in one
 * statement.
 */
export async function scanMentions(db: SqlRunner, viewerId: string, retention: RetentionClock, after: MentionPosition | null, limit: number): Promise<MentionRow[]> {
  const rows = await db.rows<MessageRow & { sent_micros: number; everyone: boolean }>(
    mentionPage({
      ...retentionValues(retention),
      viewerId,
      ...timedAfterValues(after === null ? null : { micros: after.sentMicros, convId: after.convId, seq: after.seq }),
      limit,
    }),
  );
  return rows.map((row) => ({
    message: messageRowOf(row),
    position: { convId: row.convId, seq: row.seq, sentMicros: Number(row.sent_micros) },
    everyone: row.everyone,
  }));
}

/** The unread mentions of the viewer in conversation `mb` (a `memberFloors` row): a lateral subquery answering `found`, counting at most `cap`. */
export function unreadMentionsOf(viewerId: Placeholder, cap: number): SQL {
  const named = alias(messageMentions, 'nm');
  const visible = sql`${m.senderId} <> ${viewerId} and ${m.revokedAt} is null and ${m.erasedAt} is null
    and not ${hiddenFrom(m.convId, viewerId, m.seq)}`;
  const above = sql`greatest(mb.read_seq, mb.floor_seq)`;
  // A message that names the viewer and everyone counts once: from the first run.
  return sql`(select count(*)::int as found from (
      (select 1 from ${messageMentions} ${mm} join ${messages} ${m} on ${m.convId} = ${mm.convId} and ${m.seq} = ${mm.seq}
        where ${mm.userId} = ${viewerId} and ${mm.convId} = mb.conv_id and ${mm.seq} > ${above} and ${visible})
      union all
      (select 1 from ${messageMentions} ${mm} join ${messages} ${m} on ${m.convId} = ${mm.convId} and ${m.seq} = ${mm.seq}
        where ${mm.userId} = ${EVERYONE} and ${mm.convId} = mb.conv_id and ${mm.seq} > ${above} and ${visible}
          and not exists (select 1 from ${messageMentions} ${named}
            where ${named.convId} = ${mm.convId} and ${named.seq} = ${mm.seq} and ${named.userId} = ${viewerId}))
      limit ${sql.raw(String(cap))}) t)`;
}
