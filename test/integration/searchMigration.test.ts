/**
 * Migration 0004 moves stored search vectors from the scope-lexeme form
 * ('#<conversation id>' 'graphql':1) to keyed lexemes ('<key>graphql':1).
 * Its rewrite must produce exactly what the send statement now writes, or
 * messages stored before the upgrade would be found differently (or not at
 * all). Runs the migration's UPDATE on old-form rows of a database of its own.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { conversationSearchKey, searchVector } from '../../src/history/searchText.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, send } from '../helpers/operations.ts';

const MIGRATION = readFileSync(new URL('../../drizzle/0004_keyed_search.sql', import.meta.url), 'utf8');
const REWRITE = MIGRATION.split('--> statement-breakpoint').find((statement) => statement.includes('UPDATE'))!;

/** The vector a message had before 0004: the scope lexeme, then its lexemes unkeyed. */
function oldFormVector(convId: string, text: string): string {
  const unkeyed = searchVector(convId, text).replaceAll(`'${conversationSearchKey(convId)}`, "'");
  return [`'#${convId}'`, unkeyed].filter((part) => part !== '').join(' ');
}

describe.each(backends)('Search migration 0004 (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
  });
  afterAll(() => harness.close());

  it('rewrites old-form vectors into what sends write now, and search finds them', async () => {
    const group = await createGroup(alice, ['bob']);
    const texts = ['GraphQL 游标分页 p99', "it's 消息漫游 ok OK", '👍', '收'];
    for (const text of texts) await send(alice, group.id, text);
    await harness.database.db.execute(sql`update message_bodies b set search_terms = v.old::tsvector
      from unnest(${sql.param(texts.map((_, i) => i + 1))}::int8[], ${sql.param(texts.map((t) => oldFormVector(group.uuid, t)))}::text[]) as v(seq, old)
      where b.conv_id = ${group.uuid}::uuid and b.seq = v.seq`);
    const before = rowsOf<{ terms: string }>(
      await harness.database.db.execute(sql`select search_terms::text as terms from message_bodies where conv_id = ${group.uuid}::uuid order by seq`),
    );
    expect(before[0]!.terms).toContain(`'#${group.uuid}'`);
    const SEARCH = `query { search(query: "游标分页", first: 5) { edges { node { seq } } } }`;
    expect((await alice.gql(SEARCH)).data.search.edges).toEqual([]);

    await harness.database.db.execute(sql.raw(REWRITE));

    const after = rowsOf<{ terms: string; expected: string }>(
      await harness.database.db.execute(sql`select b.search_terms::text as terms, v.expected::tsvector::text as expected
        from message_bodies b join unnest(${sql.param(texts.map((_, i) => i + 1))}::int8[], ${sql.param(texts.map((t) => searchVector(group.uuid, t)))}::text[]) as v(seq, expected)
          on b.seq = v.seq
        where b.conv_id = ${group.uuid}::uuid order by b.seq`),
    );
    expect(after.map((r) => r.terms)).toEqual(after.map((r) => r.expected));
    expect((await alice.gql(SEARCH)).data.search.edges).toEqual([{ node: { seq: 1 } }]);
  });
});
