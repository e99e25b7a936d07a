/**
 * The benchmark data set, loaded with set-based SQL (a few statements per
 * batch of messages, never one call per message): 2,000,000 messages in
 * 2,000 conversations, one hot conversation of 500,000, the rest even; texts
 * of 20 to 200 characters mixing Chinese and English (benchTexts.ts); a few
 * per cent of messages deleted-for-me by some members, and some revoked.
 * Bodies are written with their search vectors, from the one tokenizer.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { rowsOf } from '../db/rows.ts';
import { searchVector } from '../history/searchText.ts';
import { reindexInbox } from '../store/inboxIndex.ts';
import { BENCH_TEXT_PERIOD, benchText } from './benchTexts.ts';
import { type SeedBatch, seedBatches } from './seedBatches.ts';

/** The shape of the data set; tests use a small one, the benchmark the default. */
export interface BenchDataShape {
  conversations: number;
  totalMessages: number;
  hotMessages: number;
  /** Members per conversation (the first is the bench user `bench-0`... see `memberOf`). */
  membersPerConversation: number;
}

export const BENCH_DATA: BenchDataShape = {
  conversations: 2000,
  totalMessages: 2_000_000,
  hotMessages: 500_000,
  membersPerConversation: 5,
};

/** The hot conversation's id, fixed so benchmarks find it. */
export const HOT_CONVERSATION_ID = '00000000-0000-4000-8000-000000000000';

/** Conversation `i`'s id (i = 0 is the hot one). */
export function benchConversationId(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

/** The user ids of conversation `i`: `user-i`, `user-(i+1)`, ... so every user is in several conversations. */
export function benchMembers(i: number, shape: BenchDataShape): string[] {
  return Array.from({ length: shape.membersPerConversation }, (_, k) => `user-${(i + k) % shape.conversations}`);
}

/** The search benchmark's user: a member of conversations 1 to 100 (not the hot one), about 75,000 messages. */
export const SEARCH_BENCH_USER = 'searcher';
export const SEARCH_BENCH_CONVERSATIONS = 100;

/**
 * Makes `SEARCH_BENCH_USER` a member of its conversations (those of them a
 * smaller data set has); harmless to repeat (the benchmark runs it on older data sets).
 */
export async function addSearchBenchMember(db: Database): Promise<void> {
  const ids = Array.from({ length: SEARCH_BENCH_CONVERSATIONS }, (_, k) => benchConversationId(k + 1));
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into members (conv_id, user_id, role)
      select c.id, ${SEARCH_BENCH_USER}, 'member' from conversations c where c.id = any(${sql.param(ids)}::uuid[])
      on conflict do nothing`);
    await tx.execute(reindexInbox(ids));
  });
}


/** How a seed runs. */
export interface SeedOptions {
  /** Batches loaded at once, each on its own connection (PGlite runs them one after another). */
  concurrency?: number;
  /** The most messages one batch (one transaction) loads. */
  batchMessages?: number;
}

/** What a seed did: loaded the data set, or found conversations there already and wrote nothing. */
export type SeedOutcome = { kind: 'seeded'; messages: number; seconds: number } | { kind: 'not-empty'; conversations: number };

/**
 * 25,000 messages: under 2 s per batch on the 2-core benchmark machine with
 * two batches at once (50,000 took up to 3 s), and few enough transactions
 * (80) that their overhead does not count.
 */
const DEFAULT_BATCH_MESSAGES = 25_000;

/**
 * Loads the data set into an empty, migrated database, with search vectors
 * exactly as sends write them: `searchVector(conversation, text)` of the one
 * tokenizer, computed once per conversation and distinct text
 * (`BENCH_TEXT_PERIOD` of them) and joined to the bodies by seq in SQL, so
 * 2,000,000 bodies need 180,000 tokenizations and no reindex. The search
 * index stays in place: batches on two connections fill it faster than one
 * GIN build after the load (42 s against 51 s for the whole seed, measured).
 * It takes the load through its pending list (`loadingSearchIndex`), and
 * the seed leaves it as the migrations made it, whether it finishes or stops.
 * Reports what it is doing and how far it got through `progress`.
 */
export async function seedBenchData(
  db: Database,
  shape: BenchDataShape,
  progress: (line: string) => void,
  options: SeedOptions = {},
): Promise<SeedOutcome> {
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const count = (n: number) => n.toLocaleString('en');
  const existing = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int8 as n from conversations`))[0]!.n;
  if (existing > 0) return { kind: 'not-empty', conversations: existing };

  const counts = messageCounts(shape);
  // One clock for every batch, so created_at grows with seq across batches too.
  const anchor = new Date().toISOString();
  progress(`seed: ${count(shape.conversations)} conversations and their ${count(shape.conversations * shape.membersPerConversation)} members`);
  await insertConversations(db, shape, counts, anchor);

  const batches = seedBatches(counts, options.batchMessages ?? DEFAULT_BATCH_MESSAGES);
  const texts = Array.from({ length: BENCH_TEXT_PERIOD }, (_, k) => benchText(k));
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 1, batches.length));
  progress(`seed: ${count(shape.totalMessages)} messages with bodies and search vectors, in ${batches.length} batches, ${concurrency} at a time`);
  await db.execute(searchIndexPendingList('on'));
  let next = 0;
  let loaded = 0;
  let failed = false;
  let lastReport = performance.now();
  const lane = async () => {
    while (!failed && next < batches.length) {
      const batch = batches[next++]!;
      try {
        await insertBatch(db, shape, counts, texts, batch, anchor);
      } catch (error) {
        failed = true;
        throw error;
      }
      loaded += batch.messages;
      if (performance.now() - lastReport >= 2000 || loaded === shape.totalMessages) {
        lastReport = performance.now();
        progress(`seed: ${count(loaded)} of ${count(shape.totalMessages)} messages (${Math.floor((loaded / shape.totalMessages) * 100)}%), ${elapsed()}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } catch (error) {
    progress('seed: stopped; the database holds part of the data set: drop it and seed a fresh one');
    // The load's error is the one to report; the database may be why this fails too.
    await closeSearchIndexPendingList(db).catch(() => {});
    throw error;
  }
  progress(`seed: merging the search index's pending entries, ${elapsed()}`);
  await closeSearchIndexPendingList(db);
  await addSearchBenchMember(db);

  // Fresh visibility maps let index-only scans skip the heap, as on a long-lived database.
  progress(`seed: vacuuming and analyzing the tables, ${elapsed()}`);
  const tables = ['messages', 'message_bodies', 'message_hide_ranges', 'members', 'conversations', 'user_inbox'];
  let vacuumed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (vacuumed < tables.length) await db.execute(sql`vacuum analyze ${sql.identifier(tables[vacuumed++]!)}`);
    }),
  );
  return { kind: 'seeded', messages: loaded, seconds: (performance.now() - started) / 1000 };
}

/** The search index (`message_bodies.search_terms`, GIN). */
const SEARCH_INDEX = 'message_bodies_search_idx';

/**
 * Turns the search index's pending list on or off. The migrations keep it
 * off (0017: searches read a pending list whole), so each send puts its
 * lexemes straight into the index; for the seed's 2,000,000 bodies that
 * took 156 s of a seed that finishes in 51 s when the batches append to the
 * pending list and it is merged into the index once, in bulk, at the end
 * (measured on the 2-core benchmark machine, fresh database).
 */
function searchIndexPendingList(state: 'on' | 'off') {
  return sql`alter index ${sql.identifier(SEARCH_INDEX)} set (fastupdate = ${sql.raw(state)})`;
}

/** Turns the search index's pending list off again and merges what it holds, as migration 0017 does. */
async function closeSearchIndexPendingList(db: Database): Promise<void> {
  await db.execute(searchIndexPendingList('off'));
  await db.execute(sql`select gin_clean_pending_list(${SEARCH_INDEX}::regclass)`);
}

/** Messages per conversation: the hot one first, the rest even, the remainder to conversation 1 so the total is exact. */
function messageCounts(shape: BenchDataShape): number[] {
  const rest = shape.conversations - 1;
  const perConversation = Math.floor((shape.totalMessages - shape.hotMessages) / Math.max(rest, 1));
  const remainder = shape.totalMessages - shape.hotMessages - perConversation * rest;
  return Array.from({ length: shape.conversations }, (_, i) => (i === 0 ? shape.hotMessages : i === 1 ? perConversation + remainder : perConversation));
}

/** Every conversation and its members, in two statements. */
async function insertConversations(db: Database, shape: BenchDataShape, counts: number[], anchor: string): Promise<void> {
  const ids = counts.map((_, i) => benchConversationId(i));
  const members = ids.flatMap((id, i) => benchMembers(i, shape).map((userId, r) => ({ id, userId, role: r === 0 ? 'owner' : 'member' })));
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into conversations (id, kind, title, max_seq, last_activity_at)
      select id, 'group', 'bench ' || id, n, ${anchor}::timestamptz - interval '1 hour' * random()
      from unnest(${sql.param(ids)}::uuid[], ${sql.param(counts)}::int8[]) as t(id, n)`);
    await tx.execute(sql`insert into members (conv_id, user_id, role)
      select * from unnest(${sql.param(members.map((m) => m.id))}::uuid[], ${sql.param(members.map((m) => m.userId))}::text[], ${sql.param(members.map((m) => m.role))}::text[])`);
    await tx.execute(reindexInbox(ids));
  });
}

/**
 * One batch in one transaction: its messages, their bodies with search
 * vectors, and the hides. Spread over three years, oldest first; the sender
 * rotates through the members; every 37th message is revoked by its sender
 * (no body); the second member has deleted every 29th message for themselves.
 */
async function insertBatch(db: Database, shape: BenchDataShape, counts: number[], texts: string[], batch: SeedBatch, anchor: string): Promise<void> {
  // Every message of the batch as a row (id, ord, n, g): conversation id, index, message count, and seq.
  const slices = sql`(select s.id, s.ord, s.n, g from unnest(${sql.param(batch.slices.map((s) => benchConversationId(s.index)))}::uuid[],
      ${sql.param(batch.slices.map((s) => s.index))}::int8[], ${sql.param(batch.slices.map((s) => s.from))}::int8[],
      ${sql.param(batch.slices.map((s) => s.to))}::int8[], ${sql.param(batch.slices.map((s) => counts[s.index]!))}::int8[]) as s(id, ord, lo, hi, n),
    generate_series(s.lo, s.hi) g) s`;
  // The vectors of the batch's conversations: one per distinct text, as a send would write it.
  const conversations = [...new Set(batch.slices.map((s) => s.index))];
  const vectorIds = conversations.flatMap((i) => texts.map(() => benchConversationId(i)));
  const vectorSlots = conversations.flatMap(() => texts.map((_, k) => k));
  const vectors = conversations.flatMap((i) => texts.map((text) => searchVector(benchConversationId(i), text)));
  const members = shape.membersPerConversation;
  const sender = sql`'user-' || ((s.ord + s.g % ${members}) % ${shape.conversations})`;
  const createdAt = sql`${anchor}::timestamptz - interval '3 years' * (1 - s.g::float8 / s.n)`;
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at, revoked_at, revoked_by)
      select s.id, s.g, ${sender}, 'seed-' || s.g, ${createdAt},
        case when s.g % 37 = 0 then ${createdAt} + interval '1 minute' end,
        case when s.g % 37 = 0 then ${sender} end
      from ${slices}`);
    await tx.execute(sql`insert into message_bodies (conv_id, seq, text, search_terms)
      select s.id, s.g, t.text, v.terms
      from ${slices}
        join unnest(${sql.param(texts)}::text[]) with ordinality as t(text, slot) on t.slot = s.g % ${BENCH_TEXT_PERIOD} + 1
        join unnest(${sql.param(vectorIds)}::uuid[], ${sql.param(vectorSlots)}::int8[], ${sql.param(vectors)}::tsvector[]) as v(id, slot, terms)
          on v.id = s.id and v.slot = s.g % ${BENCH_TEXT_PERIOD}
      where s.g % 37 <> 0`);
    if (members >= 2 && shape.conversations >= 2) {
      // A range each: the messages between them are not hidden.
      await tx.execute(sql`insert into message_hide_ranges (conv_id, user_id, from_seq, to_seq)
        select s.id, 'user-' || ((s.ord + 1) % ${shape.conversations}), s.g, s.g
        from ${slices}
        where s.g % 29 = 0`);
    }
  });
}
