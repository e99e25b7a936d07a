/**
 * The benchmark seed on a small shape, on each backend: every message, body
 * and hide where the data set says, and every search vector exactly what
 * the tokenizer makes for a send of that text (and what a reindex writes).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { rowsOf } from '../../src/db/rows.ts';
import { createRunner } from '../../src/db/runner.ts';
import { conversationSearchKey, indexLexemes, parseSearchQuery, searchVector, tsqueryFor } from '../../src/history/searchText.ts';
import { reindexSearch } from '../../src/search/reindex.ts';
import { type BenchDataShape, benchConversationId, benchMembers, type SeedOutcome, seedBenchData, SEARCH_BENCH_USER } from '../../src/seed/benchData.ts';
import { benchText } from '../../src/seed/benchTexts.ts';
import { backends, openTestDatabase } from '../helpers/database.ts';

/** A hot conversation of 400 messages cut over batches of 150, and four of 150 (the second with the remainder). */
const SHAPE: BenchDataShape = { conversations: 5, totalMessages: 1000, hotMessages: 400, membersPerConversation: 3 };
const COUNTS = [400, 150, 150, 150, 150];

describe.each(backends)('The benchmark seed (%s)', (backend) => {
  let database: DatabaseHandle;
  let outcome: SeedOutcome;
  const progress: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(backend);
    outcome = await seedBenchData(database.db, SHAPE, (line) => progress.push(line), { concurrency: 2, batchMessages: 150 });
  });
  afterAll(() => database.close());

  const rows = async <Row>(query: ReturnType<typeof sql>) => rowsOf<Row>(await database.db.execute(query));

  it('loads every conversation with dense seqs, every 37th message revoked without a body, and says how far it got', async () => {
    expect(outcome).toMatchObject({ kind: 'seeded', messages: 1000 });
    const perConversation = await rows<{ id: string; max_seq: number; messages: number; top: number; revoked: number; bodies: number }>(sql`
      select c.id, c.max_seq, count(m.seq)::int8 as messages, max(m.seq) as top,
        count(m.revoked_at)::int8 as revoked, count(b.seq)::int8 as bodies
      from conversations c join messages m on m.conv_id = c.id left join message_bodies b on b.conv_id = m.conv_id and b.seq = m.seq
      group by c.id, c.max_seq order by c.id`);
    expect(perConversation).toEqual(
      COUNTS.map((n, i) => ({
        id: benchConversationId(i),
        max_seq: n,
        messages: n,
        top: n,
        revoked: Math.floor(n / 37),
        bodies: n - Math.floor(n / 37),
      })),
    );
    expect(progress[0]).toBe('seed: 5 conversations and their 15 members');
    expect(progress[1]).toBe('seed: 1,000 messages with bodies and search vectors, in 7 batches, 2 at a time');
    expect(progress).toContainEqual(expect.stringMatching(/^seed: 1,000 of 1,000 messages \(100%\), [\d.]+ s$/));
    expect(progress.at(-1)).toMatch(/^seed: vacuuming and analyzing the tables, [\d.]+ s$/);
  });

  it('makes the members of each conversation, the search user one of conversations 1 to 100 that exist, and the second member hide every 29th message', async () => {
    const members = await rows<{ conv_id: string; user_id: string; role: string }>(sql`select conv_id, user_id, role from members order by conv_id, role desc, user_id`);
    const expected = COUNTS.flatMap((_, i) => {
      const [owner, ...others] = benchMembers(i, SHAPE);
      const plain = [...others, ...(i >= 1 ? [SEARCH_BENCH_USER] : [])].sort();
      return [owner!, ...plain].map((userId) => ({ conv_id: benchConversationId(i), user_id: userId, role: userId === owner ? 'owner' : 'member' }));
    });
    expect(members).toEqual(expected);
    const hides = await rows<{ conv_id: string; user_id: string; hidden: number }>(
      sql`select conv_id, user_id, sum(to_seq - from_seq + 1)::int8 as hidden from message_hide_ranges group by conv_id, user_id order by conv_id`,
    );
    expect(hides).toEqual(COUNTS.map((n, i) => ({ conv_id: benchConversationId(i), user_id: benchMembers(i, SHAPE)[1], hidden: Math.floor(n / 29) })));
  });

  it('writes each body the text of its seq and the search vector a send of that text writes', async () => {
    const bodies = await rows<{ conv_id: string; seq: number; text: string; terms: string }>(
      sql`select conv_id, seq, text, search_terms::text as terms from message_bodies order by conv_id, seq`,
    );
    // PostgreSQL's own spelling of each expected vector (lexemes sorted), to compare as text.
    const sent = bodies.map((b) => searchVector(b.conv_id, benchText(b.seq)));
    const canonical = await rows<{ terms: string }>(sql`select t::tsvector::text as terms from unnest(${sql.param(sent)}::text[]) with ordinality as u(t, n) order by n`);
    expect(bodies.map((b) => ({ conv_id: b.conv_id, seq: b.seq, text: b.text, terms: b.terms }))).toEqual(
      bodies.map((b, k) => ({ conv_id: b.conv_id, seq: b.seq, text: benchText(b.seq), terms: canonical[k]!.terms })),
    );
  });

  it('leaves reindex-search nothing to change: rewriting every vector writes the same ones', async () => {
    const vectors = () => rows<{ terms: string }>(sql`select search_terms::text as terms from message_bodies order by conv_id, seq`);
    const before = await vectors();
    const summary = await reindexSearch(createRunner(database.client), { all: true });
    expect(summary.written).toBe(before.length);
    expect(await vectors()).toEqual(before);
  });

  it('leaves the search index as the migrations made it: no pending list, nothing pending', async () => {
    expect(await searchIndexOptions(database)).toEqual(['fastupdate=off']);
    expect(await rows<{ merged: number }>(sql`select gin_clean_pending_list('message_bodies_search_idx'::regclass)::int8 as merged`)).toEqual([{ merged: 0 }]);
    // Every body is in the index proper: a word's index lookup finds each text that has it.
    const convId = benchConversationId(1);
    const parsed = parseSearchQuery('build');
    if (!parsed.ok) throw new Error('the query has words');
    const texts = await rows<{ seq: number; text: string }>(sql`select seq, text from message_bodies where conv_id = ${convId} order by seq`);
    const expected = texts.filter((b) => indexLexemes(b.text).has('build')).map((b) => b.seq);
    expect(expected.length).toBeGreaterThan(0);
    const found = await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      return rowsOf<{ seq: number }>(
        await tx.execute(sql`select seq from message_bodies
          where search_terms @@ ${tsqueryFor(parsed.query, conversationSearchKey(convId))}::tsquery and conv_id = ${convId} order by seq`),
      );
    });
    expect(found.map((r) => r.seq)).toEqual(expected);
  });

  it('refuses a database that already has conversations, writing nothing', async () => {
    const again = await seedBenchData(database.db, SHAPE, () => undefined);
    expect(again).toEqual({ kind: 'not-empty', conversations: 5 });
    expect(await rows<{ n: number }>(sql`select count(*)::int8 as n from messages`)).toEqual([{ n: 1000 }]);
  });
});

describe.each(backends)('A benchmark seed that stops (%s)', (backend) => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase(backend);
  });
  afterAll(() => database.close());

  it('reports the failing batch and still leaves the search index without a pending list', async () => {
    // The third batch's messages are refused, as a full disk or a lost connection would stop it.
    await database.db.execute(sql`create function refuse_seq_300() returns trigger language plpgsql as $$
      begin if new.seq = 300 then raise exception 'seq 300 refused'; end if; return new; end $$`);
    await database.db.execute(sql`create trigger refuse_seq_300 before insert on messages for each row execute function refuse_seq_300()`);
    const progress: string[] = [];
    // drizzle wraps the database's error as its cause.
    await expect(seedBenchData(database.db, SHAPE, (line) => progress.push(line), { concurrency: 1, batchMessages: 150 })).rejects.toMatchObject({
      cause: expect.objectContaining({ message: 'seq 300 refused' }),
    });
    expect(progress.at(-1)).toBe('seed: stopped; the database holds part of the data set: drop it and seed a fresh one');
    expect(await searchIndexOptions(database)).toEqual(['fastupdate=off']);
  });
});

/** The search index's storage parameters, as PostgreSQL lists them. */
async function searchIndexOptions(database: DatabaseHandle): Promise<string[]> {
  const [row] = rowsOf<{ options: string[] | null }>(await database.db.execute(sql`select reloptions as options from pg_class where relname = 'message_bodies_search_idx'`));
  return row!.options ?? [];
}
