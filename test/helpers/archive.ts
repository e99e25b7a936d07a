/**
 * Fixtures for the archive's tests: aged messages (the archiver goes by
 * creation time), each message's expected text, and what a store holds.
 */
import { Param, sql } from 'drizzle-orm';
import type { SegmentStore } from '../../src/archive/segmentStore.ts';
import type { SqlRunner } from '../../src/db/runner.ts';
import { reindexInbox } from '../../src/store/inboxIndex.ts';

/** The text seeded for `seq`: distinct per message, with some CJK and emoji so encodings are exercised. */
export const textOf = (seq: number): string => `message ${seq} ${'历史'.repeat(seq % 4)}${seq % 7 === 0 ? ' 👍🏽' : ''}`;

/**
 * Appends `count` messages from `senderId` to `convId`, the oldest
 * `ageDays` days ago and one second apart (creation time follows seq, as
 * sends guarantee), with their search vectors left null.
 */
export async function seedAgedMessages(db: SqlRunner, convId: string, senderId: string, count: number, ageDays: number): Promise<void> {
  await db.transaction(async (tx) => {
    const [{ base }] = (await tx.rows<{ base: number }>(sql`select max_seq as base from conversations where id = ${convId}`)) as [{ base: number }];
    const seqs = Array.from({ length: count }, (_, i) => base + i + 1);
    await tx.rows(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
      select ${convId}, s, ${senderId}, 'aged-' || s, now() - make_interval(days => ${ageDays}) + make_interval(secs => s - ${base})
      from unnest(${new Param(seqs)}::int8[]) s`);
    await tx.rows(sql`insert into message_bodies (conv_id, seq, text)
      select ${convId}, s, t from unnest(${new Param(seqs)}::int8[], ${new Param(seqs.map(textOf))}::text[]) as x(s, t)`);
    await tx.rows(sql`update conversations set max_seq = max_seq + ${count}, last_activity_at = now() where id = ${convId}`);
    await tx.rows(reindexInbox([convId]));
  });
}

/** A group `convId` owned by `owner` with `members`, made in SQL (for a database no server has open yet). */
export async function createGroupInSql(db: SqlRunner, convId: string, owner: string, members: string[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.rows(sql`insert into conversations (id, kind, title) values (${convId}, 'group', 'archive test')`);
    await tx.rows(sql`insert into members (conv_id, user_id, role) values (${convId}, ${owner}, 'owner')`);
    for (const member of members) await tx.rows(sql`insert into members (conv_id, user_id) values (${convId}, ${member})`);
    await tx.rows(reindexInbox([convId]));
  });
}

/** Every key `store` holds, sorted. */
export async function storedKeys(store: SegmentStore): Promise<string[]> {
  const keys = [];
  for await (const object of store.list()) keys.push(object.key);
  return keys.sort();
}
