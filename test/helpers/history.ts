/**
 * Histories written straight into the store with chosen creation times, for
 * tests of rules that depend on a message's age (retention, the purge).
 */
import { sql } from 'drizzle-orm';
import type { SqlRunner } from '../../src/db/runner.ts';
import type { RetentionPolicy } from '../../src/history/retention.ts';

/** Appends messages from alice created at `createdAt` (oldest first) to conversation `convId`, with bodies. */
export async function appendHistory(db: SqlRunner, convId: string, createdAt: Date[]): Promise<void> {
  await db.rows(sql`with c as (
      update conversations set max_seq = max_seq + ${createdAt.length}::int8 where id = ${convId}
      returning max_seq - ${createdAt.length}::int8 as base),
    m as (
      insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
      select ${convId}, c.base + t.ord, 'alice', 'old-' || (c.base + t.ord), t.at::timestamptz
      from c, unnest(${sql.param(createdAt.map((d) => d.toISOString()))}::text[]) with ordinality as t(at, ord)
      returning seq)
    insert into message_bodies (conv_id, seq, text) select ${convId}, seq, 'message ' || seq from m`);
}

/**
 * Sets conversation `convId`'s own retention limits directly, past the
 * checks `setRetentionPolicy`'s caller makes (so a test can give it a longer
 * limit than the server's and see that the server's still applies).
 */
export async function setOwnPolicy(db: SqlRunner, convId: string, policy: RetentionPolicy): Promise<void> {
  await db.rows(sql`update conversations set retention_days = ${policy.days}::int, retention_max_messages = ${policy.maxMessages}::int
    where id = ${convId}`);
}
