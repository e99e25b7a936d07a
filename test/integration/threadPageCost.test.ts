/**
 * What a page of 100 costs when it asks for everything issue 17 added to a
 * message: a constant number of statements whatever the page size, one per
 * kind of lookup, never one per edge.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup } from '../helpers/operations.ts';

const RICH_PAGE = `query Rich($id: ID!, $last: Int) {
  conversation(id: $id) {
    messages(last: $last) {
      edges { node { seq editedAt replyCount replyTo { seq content { __typename ... on TextContent { text } } } reactions { reaction count reactedByMe } } }
    }
  }
}`;

describe.each(backends)('A page asking for edits, replies and reactions (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
  });
  afterAll(() => harness.close());

  it('costs the same few statements for 10 messages as for 100', async () => {
    const group = await createGroup(alice, ['bob']);
    // 105 messages: the 100 newest each reply to one of the 5 oldest; a third
    // were edited and half carry a reaction. Written as rows (a few hundred
    // mutations would only slow the test); the API reads them back.
    await seedMessages(harness, group.uuid, 'bob', 105);
    const db = harness.database.db;
    await db.execute(sql`update messages set reply_to_seq = (seq - 6) % 5 + 1, thread_root_seq = (seq - 6) % 5 + 1
      where conv_id = ${group.uuid} and seq > 5`);
    await db.execute(sql`with e as (update messages set edited_at = now() where conv_id = ${group.uuid} and seq > 5 and seq % 3 = 0 returning conv_id, seq)
      insert into message_edits (conv_id, seq, version, text, edited_at) select conv_id, seq, 1, 'before', now() from e`);
    await db.execute(sql`insert into message_reactions (conv_id, seq, reaction, user_id)
      select conv_id, seq, case when seq % 4 = 0 then '👍' else ':eyes:' end, 'alice' from messages where conv_id = ${group.uuid} and seq > 5 and seq % 2 = 0`);
    const small = await alice.gql(RICH_PAGE, { id: group.id, last: 10 });
    const large = await alice.gql(RICH_PAGE, { id: group.id, last: 100 });
    expect(small.errors).toBeUndefined();
    expect(large.errors).toBeUndefined();
    const edges = large.data.conversation.messages.edges;
    expect(edges).toHaveLength(100);
    // The answers are really there, so the count is of real work.
    expect(edges.filter((e: any) => e.node.editedAt !== null).length).toBe(34);
    expect(edges.filter((e: any) => e.node.reactions.length === 1 && e.node.reactions[0].reactedByMe).length).toBe(50);
    expect(edges.every((e: any) => e.node.replyTo !== null && e.node.replyTo.content.__typename === 'TextContent')).toBe(true);
    expect(edges.every((e: any) => e.node.replyCount === 0)).toBe(true);
    // The page (with its warm bodies), the originals, their bodies, reply counts, reactions.
    expect(large.stats.statements).toBeLessThanOrEqual(5);
    expect(large.stats.statements).toBe(small.stats.statements);
  });
});
