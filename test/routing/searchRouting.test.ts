/**
 * Search within one conversation routes to that conversation's shard
 * whatever it asks for. The routing run (routing.test.ts) sees the few
 * shapes of the search statement its files send; here every filter
 * condition, in each polarity and with each of the others, with words and
 * without, on a first page and after a cursor, is rendered as the backend
 * sends it and explained on the partitioned layout.
 */
import { PgDialect } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import type { SqlRunner } from '../../src/db/runner.ts';
import type { MessageFilter } from '../../src/history/messageFilter.ts';
import { parseSearchQuery } from '../../src/history/searchText.ts';
import type { SearchRequest } from '../../src/search/backend.ts';
import { postgresSearch } from '../../src/search/postgresSearch.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { distributedTables, partitionTables } from '../helpers/partitionedLayout.ts';
import { explainingClient, partitionsRead, shardsOf } from '../helpers/routing.ts';

const CONVERSATION = '3f1c2a4e-8b7d-4c6a-9e5f-1a2b3c4d5e6f';
const TRISTATE = [null, true, false] as const;

/** Every search request narrowed to `CONVERSATION` that this file explains. */
function requests(): SearchRequest[] {
  const parsed = parseSearchQuery('quarterly report');
  if (!parsed.ok) throw new Error('The test query must parse.');
  const all: SearchRequest[] = [];
  for (const words of [false, true]) {
    for (const paged of [false, true]) {
      for (const pinned of TRISTATE) {
        for (const starred of TRISTATE) {
          for (const mentionsMe of TRISTATE) {
            for (const hasReplies of TRISTATE) {
              // Senders and times only add conditions (and the times, lookups of their seqs): on, or all off once.
              for (const others of [true, false]) {
                if (!others && (pinned !== null || starred !== null || mentionsMe !== null || hasReplies !== null)) continue;
                const filter: MessageFilter = {
                  senderIds: others ? ['alice', 'bob'] : null,
                  sentAfter: others ? '2024-01-01T00:00:00.000Z' : null,
                  sentBefore: others ? '2025-01-01T00:00:00.000Z' : null,
                  mentionsMe,
                  starred,
                  pinned,
                  hasReplies,
                };
                all.push({
                  viewerId: 'bob',
                  query: words ? parsed.query : null,
                  convId: CONVERSATION,
                  filter,
                  // A cursor within a conversation names that conversation.
                  after: paged ? { createdMicros: 1_720_000_000_000_000, convId: CONVERSATION, seq: 40 } : null,
                  size: 20,
                  retention: { server: { days: 30, maxMessages: 10_000 }, now: new Date('2024-06-01T00:00:00Z') },
                });
              }
            }
          }
        }
      }
    }
  }
  return all;
}

/** The statement `request` sends, as text and values, without running it. */
async function statementOf(request: SearchRequest): Promise<{ text: string; params: unknown[] }> {
  const dialect = new PgDialect();
  let sent: SQL | undefined;
  const capture: SqlRunner = {
    rows: async <Row>(query: SQL) => {
      sent = query;
      return [] as Row[];
    },
    transaction: () => {
      throw new Error('A search is one statement, never a transaction.');
    },
  };
  await postgresSearch.search(capture, request);
  if (sent === undefined) throw new Error('The search sent no statement.');
  const { sql: text, params } = dialect.sqlToQuery(sent);
  return { text, params };
}

describe.skipIf(!process.env.DATABASE_URL)('Search within one conversation on the Citus layout', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let sql: postgres.Sql;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const handle = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 1 });
    try {
      await applyMigrations(handle);
    } finally {
      await handle.close();
    }
    sql = explainingClient(scratch.url);
    await partitionTables(sql);
  });
  afterAll(async () => {
    await sql?.end();
    await scratch?.drop();
  });

  it('reads one shard, the conversation’s, for every filter, with words or without, on every page', async () => {
    const [shard] = await shardsOf(sql, [CONVERSATION]);
    const conversationTables = new Set(distributedTables.filter((t) => t.group === 'conversation').map((t) => t.table));
    const strayed: { filter: MessageFilter; words: boolean; paged: boolean; reads: Record<string, number[]> }[] = [];
    const all = requests();
    for (const request of all) {
      const { text, params } = await statementOf(request);
      const reads = await partitionsRead(sql, text, params);
      const elsewhere = Object.entries(reads).some(([table, partitions]) => conversationTables.has(table) && partitions.some((p) => p !== shard));
      if (elsewhere) strayed.push({ filter: request.filter, words: request.query !== null, paged: request.after !== null, reads });
    }
    expect(all.length).toBe(2 * 2 * (81 + 1));
    expect(strayed).toEqual([]);
  });
});
