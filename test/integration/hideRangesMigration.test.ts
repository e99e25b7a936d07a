/**
 * Migration 0009 moves "deleted for me" from a row per message
 * (`message_hides`) to ranges (`message_hide_ranges`), merged as hides merge
 * now: hidden seqs with no message between them (none, or only purged ones)
 * become one range. Runs the migration's statements on per-message rows in
 * a database of its own, then reads pages through the API.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup, type Edge, MESSAGES } from '../helpers/operations.ts';

const MIGRATION = readFileSync(new URL('../../drizzle/0009_hide_ranges_data.sql', import.meta.url), 'utf8');
const STATEMENTS = MIGRATION.split('--> statement-breakpoint');

describe.each(backends)('Hidden ranges migration 0009 (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
  });
  afterAll(() => harness.close());

  it('turns hides into ranges merged across purged seqs only, empties message_hides, and pages hide the same messages', async () => {
    const group = await createGroup(alice, ['bob', 'carol']);
    await seedMessages(harness, group.uuid, 'alice', 20);
    const execute = async (query: Parameters<typeof harness.database.db.execute>[0]) => rowsOf(await harness.database.db.execute(query));
    await execute(sql`delete from messages where conv_id = ${group.uuid} and seq = 11`);
    // 30: a hide whose message is gone (no message above 20 was ever stored here).
    const hides = { bob: [1, 2, 3, 5, 10, 12, 30], carol: [9] };
    for (const [userId, seqs] of Object.entries(hides)) {
      await execute(sql`insert into message_hides (conv_id, user_id, seq) select ${group.uuid}, ${userId}, unnest(${sql.param(seqs)}::int8[])`);
    }

    for (const statement of STATEMENTS) await execute(sql.raw(statement));

    expect(
      await execute(sql`select user_id, from_seq, to_seq from message_hide_ranges where conv_id = ${group.uuid} order by user_id, from_seq`),
    ).toEqual([
      { user_id: 'bob', from_seq: 1, to_seq: 3 },
      { user_id: 'bob', from_seq: 5, to_seq: 5 },
      { user_id: 'bob', from_seq: 10, to_seq: 12 },
      { user_id: 'bob', from_seq: 30, to_seq: 30 },
      { user_id: 'carol', from_seq: 9, to_seq: 9 },
    ]);
    expect(await execute(sql`select count(*)::int as n from message_hides`)).toEqual([{ n: 0 }]);
    const page = (await bob.gql(MESSAGES, { id: group.id, last: 20 })).data.conversation.messages;
    expect(page.edges.map((e: Edge) => e.node.seq)).toEqual([4, 6, 7, 8, 9, 13, 14, 15, 16, 17, 18, 19, 20]);
  });
});
