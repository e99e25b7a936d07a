/**
 * The demo `backscroll serve` creates on an empty embedded database: a group
 * of the two demo users with 1,000 messages (a few revoked by its owner) and
 * their direct conversation. Groups, revokes, direct conversations, sends and
 * read marks go through the store's own functions; only the 1,000 group
 * messages are written set-based, the way the send statement writes them
 * (seqs dense, creation time rising with seq, the search vector on the body
 * row, `max_seq` and `last_activity_at` matching the newest message).
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../db/runner.ts';
import { directConversationId } from '../history/directConversation.ts';
import { searchVector } from '../history/searchText.ts';
import { createGroup, markRead, openDirect } from '../store/conversations.ts';
import { reindexInbox } from '../store/inboxIndex.ts';
import { UNPUBLISHED } from '../store/notify.ts';
import { revokeMessage } from '../store/revokes.ts';
import { sendMessage } from '../store/sends.ts';
import type { RetentionClock } from '../store/sqlFragments.ts';
import {
  DEMO_DIRECT_MESSAGES,
  DEMO_GROUP_MESSAGES,
  DEMO_GROUP_TITLE,
  DEMO_MINUTES_APART,
  DEMO_REVOKED_SEQS,
  DEMO_USERS,
  demoSender,
  demoText,
} from './demoTexts.ts';

/** The demo's conversations (internal ids). */
export interface Demo {
  groupId: string;
  directId: string;
}

/** What `ensureDemo` found or did. */
export type DemoOutcome =
  | ({ kind: 'created'; messages: number; revoked: number } & Demo)
  /** Created by an earlier start. */
  | ({ kind: 'existing' } & Demo)
  /** No demo: the database holds other conversations, or creating was not asked for. */
  | { kind: 'none' };

/** Whether the database holds no conversation at all (the only state a demo is created in). */
async function isEmpty(db: SqlRunner): Promise<boolean> {
  const rows = await db.rows<{ any: boolean }>(sql`select exists (select 1 from conversations) as any`);
  return rows[0]?.any !== true;
}

/** The demo an earlier start created, if it is there: the owner's group by its title, and the pair's direct conversation. */
async function findDemo(db: SqlRunner): Promise<Demo | null> {
  const [owner, other] = DEMO_USERS;
  const directId = directConversationId(owner, other);
  const rows = await db.rows<{ id: string }>(sql`select c.id from conversations c
      join members mb on mb.conv_id = c.id and mb.user_id = ${owner} and mb.role = 'owner'
      where c.kind = 'group' and c.title = ${DEMO_GROUP_TITLE}
        and exists (select 1 from conversations d where d.id = ${directId})
      order by c.created_at limit 1`);
  return rows[0] ? { groupId: rows[0].id, directId } : null;
}

/** Writes the group's messages, oldest `DEMO_MINUTES_APART` × count minutes ago, in one transaction. */
async function writeGroupMessages(db: SqlRunner, groupId: string): Promise<void> {
  const seqs = Array.from({ length: DEMO_GROUP_MESSAGES }, (_, i) => i + 1);
  const texts = seqs.map(demoText);
  await db.transaction(async (tx) => {
    // now() is the transaction's start, so creation times rise strictly with seq and all lie in the past.
    await tx.rows(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
      select ${groupId}, t.seq, t.sender, 'demo-' || t.seq, now() - interval '1 minute' * ((${DEMO_GROUP_MESSAGES + 1} - t.seq) * ${DEMO_MINUTES_APART})
      from unnest(${sql.param(seqs)}::int8[], ${sql.param(seqs.map(demoSender))}::text[]) as t(seq, sender)`);
    await tx.rows(sql`insert into message_bodies (conv_id, seq, text, search_terms)
      select ${groupId}, t.seq, t.text, t.terms::tsvector
      from unnest(${sql.param(seqs)}::int8[], ${sql.param(texts)}::text[], ${sql.param(texts.map((text) => searchVector(groupId, text)))}::text[])
        as t(seq, text, terms)`);
    await tx.rows(sql`update conversations c set max_seq = m.max_seq, last_activity_at = m.newest, created_at = m.oldest
      from (select max(seq) as max_seq, max(created_at) as newest, min(created_at) as oldest from messages where conv_id = ${groupId}) m
      where c.id = ${groupId}`);
    // The activity moved without a send: the members' inbox rows follow it.
    await tx.rows(reindexInbox([groupId]));
  });
}

/**
 * Finds the demo an earlier start created; otherwise, when `create` is set
 * and the database has no conversations at all, creates it. A database with
 * any other conversation is never touched. Not atomic as a whole: a process
 * killed half-way leaves part of a demo, which later starts leave as it is.
 */
export async function ensureDemo(
  db: SqlRunner,
  { create, clock, revokeWindowSeconds }: { create: boolean; clock: RetentionClock; revokeWindowSeconds: number },
): Promise<DemoOutcome> {
  const existing = await findDemo(db);
  if (existing !== null) return { kind: 'existing', ...existing };
  if (!create || !(await isEmpty(db))) return { kind: 'none' };
  const [owner, other] = DEMO_USERS;
  const groupId = await createGroup(db, owner, DEMO_GROUP_TITLE, [other]);
  await writeGroupMessages(db, groupId);
  let revoked = 0;
  for (const seq of DEMO_REVOKED_SEQS) {
    // The owner may revoke any message of the group at any time.
    const outcome = await revokeMessage(db, UNPUBLISHED, owner, groupId, seq, revokeWindowSeconds, clock);
    if (outcome.kind === 'revoked') revoked += 1;
  }
  // The owner is a little behind, so the inbox shows unread messages.
  await markRead(db, UNPUBLISHED, owner, groupId, DEMO_GROUP_MESSAGES - 12);
  await markRead(db, UNPUBLISHED, other, groupId, DEMO_GROUP_MESSAGES);
  const directId = await openDirect(db, owner, other);
  for (const [i, message] of DEMO_DIRECT_MESSAGES.entries()) {
    await sendMessage(db, UNPUBLISHED, message.sender, directId, `demo-direct-${i + 1}`, message.text);
  }
  return { kind: 'created', groupId, directId, messages: DEMO_GROUP_MESSAGES + DEMO_DIRECT_MESSAGES.length, revoked };
}
