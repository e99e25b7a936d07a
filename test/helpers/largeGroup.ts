/**
 * A group of thousands of members, written with set-based inserts (adding
 * them through the API would take minutes), and vacuumed and analyzed as
 * autovacuum would leave it, so plans and their costs are the ones a
 * server sees.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { conversationGlobalId } from '../../src/history/globalId.ts';
import { reindexInbox } from '../../src/store/inboxIndex.ts';

/** A seeded group: member k is `userId(k)`, member 0 its owner. */
export interface LargeGroup {
  uuid: string;
  /** The global id, for GraphQL. */
  id: string;
  members: number;
  messages: number;
  userId(k: number): string;
}

/** The first members send every message in turn (seq g by member g % SENDERS). */
const SENDERS = 10;

/**
 * Seeds a group of `members` members and `messages` messages. Members join
 * two to a millisecond, the even one a microsecond after the odd one: the
 * member list orders by the millisecond, then by user id, so it lists them
 * in the order of k only if it breaks ties by user id. Member k has read up
 * to seq (37 k) mod (messages + 1): every position from 0 to the newest is
 * held by about as many members.
 */
export async function seedLargeGroup(database: DatabaseHandle, members: number, messages: number): Promise<LargeGroup> {
  const uuid = randomUUID();
  const prefix = `large-${uuid.slice(0, 8)}`;
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`insert into conversations (id, kind, title, max_seq) values (${uuid}, 'group', 'large group', ${messages})`);
    await tx.execute(sql`insert into members (conv_id, user_id, role, joined_at, read_seq)
      select ${uuid}::uuid, ${prefix} || '-' || k, case when k = 0 then 'owner' else 'member' end,
        timestamptz '2026-01-01T00:00:00Z' + (k / 2) * interval '1 millisecond' + ((k + 1) % 2) * interval '1 microsecond',
        (k * 37) % (${messages} + 1)
      from generate_series(0, ${members - 1}) k`);
    await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id)
      select ${uuid}::uuid, g, ${prefix} || '-' || (g % ${SENDERS}), 'seed-' || g from generate_series(1, ${messages}) g`);
    await tx.execute(sql`insert into message_bodies (conv_id, seq, text)
      select ${uuid}::uuid, g, 'message ' || g from generate_series(1, ${messages}) g`);
    await tx.execute(reindexInbox([uuid]));
  });
  await database.db.execute(sql`vacuum analyze members, messages, message_bodies, conversations, user_inbox`);
  return { uuid, id: conversationGlobalId(uuid), members, messages, userId: (k) => `${prefix}-${k}` };
}
