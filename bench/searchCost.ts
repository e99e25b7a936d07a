/**
 * What a search costs PostgreSQL as messages that match none of its words
 * pile up atop the searcher's conversations, as the bench's sends section
 * leaves them: `npm run bench:search-cost -- [steps] [messages per step]`
 * times the search row's 14 queries, one statement each on one connection
 * (PostgreSQL's CPU, from /proc: Linux and PostgreSQL on this box), then
 * sends `messages per step` more into each of the search user's 100
 * conversations (the send scenarios' text, `benchmark message N
 * 基准测试消息`, which only `消息` matches), and again, `steps` times.
 *
 * A search walks each conversation's newest messages until its newest hit,
 * up to RECENT_WINDOW of them, before the GIN lookup
 * (src/search/postgresSearch.ts), so the cost grows with what lies atop.
 * It prints each query's cost as well as the mix's: a change that spares
 * the common words may cost the rare ones (the word in no message walks
 * every conversation's window and then looks the whole index up), and a
 * total hides that.
 *
 * Everything runs in one transaction that is rolled back: the bench data
 * is left as it was. Rows of the running transaction cost a little more to
 * check than committed ones, so compare the steps of one run with each
 * other, not with figures read on committed data.
 */
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/db/client.ts';
import { createRunner, type SqlRunner } from '../src/db/runner.ts';
import { parseSearchQuery } from '../src/history/searchText.ts';
import { KEEP_EVERYTHING } from '../src/history/retention.ts';
import { postgresSearch, RECENT_WINDOW } from '../src/search/postgresSearch.ts';
import { addSearchBenchMember, BENCH_DATA, benchConversationId, benchMembers, SEARCH_BENCH_CONVERSATIONS, SEARCH_BENCH_USER } from '../src/seed/benchData.ts';
import { UNPUBLISHED } from '../src/store/notify.ts';
import { sendMessage } from '../src/store/sends.ts';
import { processCpuMs } from './benchServer.ts';
import { SEARCH_QUERIES } from './search.ts';
import { markdownTable } from './table.ts';

/** How many times each query runs at each step: PostgreSQL's CPU is read in 10 ms ticks, and one search can take 2 ms. */
const ROUNDS = 20;
const NO_FILTER = { senderIds: null, sentAfter: null, sentBefore: null, mentionsMe: null, starred: null, pinned: null, hasReplies: null };

/** Thrown to roll the transaction back once the measurements are taken. */
class RollBack extends Error {}

/** PostgreSQL's CPU in ms for each query of the mix, averaged over ROUNDS runs of it, on `tx`'s connection `pid`. */
async function eachQueryCpuMs(tx: SqlRunner, pid: number): Promise<number[]> {
  const requests = SEARCH_QUERIES.map((words) => {
    const parsed = parseSearchQuery(words);
    if (!parsed.ok) throw new Error(`the bench query ${JSON.stringify(words)} does not parse`);
    return { viewerId: SEARCH_BENCH_USER, query: parsed.query, convId: null, filter: NO_FILTER, after: null, size: 20, retention: { server: KEEP_EVERYTHING, now: new Date() } };
  });
  for (const request of requests) await postgresSearch.search(tx, request);
  const costs: number[] = [];
  for (const request of requests) {
    const before = processCpuMs(pid);
    for (let round = 0; round < ROUNDS; round++) await postgresSearch.search(tx, request);
    costs.push((processCpuMs(pid) - before) / ROUNDS);
  }
  return costs;
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const [stepsArg = '4', perStepArg = '40'] = process.argv.slice(2);
  const [steps, perStep] = [Number(stepsArg), Number(perStepArg)];
  if (url === undefined || !(steps >= 0) || !(perStep > 0)) {
    console.error('usage: DATABASE_URL=… npm run bench:search-cost -- [steps] [messages per step]');
    process.exit(2);
  }
  const handle = await openDatabase({ kind: 'postgres', url, poolSize: 1, statementTimeoutMs: 0 });
  // The atop count of each step, and each query's cost at each step.
  const atopCounts: number[] = [];
  const costs: number[][] = [];
  try {
    await addSearchBenchMember(handle.db);
    await createRunner(handle.client)
      .transaction(async (tx) => {
        const [backend] = await tx.rows<{ pid: number }>(sql`select pg_backend_pid() as pid`);
        let atop = 0;
        for (let step = 0; step <= steps; step++) {
          if (step > 0) {
            console.log(`search-cost: sending ${perStep} messages into each of ${SEARCH_BENCH_CONVERSATIONS} conversations (step ${step} of ${steps})...`);
            for (let k = 1; k <= SEARCH_BENCH_CONVERSATIONS; k++) {
              const [sender] = benchMembers(k, BENCH_DATA);
              for (let n = 0; n < perStep; n++) {
                await sendMessage(tx, UNPUBLISHED, sender!, benchConversationId(k), `search-cost-${step}-${k}-${n}`, `benchmark message ${n} 基准测试消息`);
              }
            }
            atop += perStep;
          }
          console.log(`search-cost: ${atop} non-matching messages atop each conversation, timing ${ROUNDS} x ${SEARCH_QUERIES.length} searches...`);
          atopCounts.push(atop);
          costs.push(await eachQueryCpuMs(tx, backend!.pid));
        }
        throw new RollBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RollBack)) throw error;
      });
  } finally {
    await handle.close();
  }
  console.log(`\n## PostgreSQL's CPU for the search row's ${SEARCH_QUERIES.length} queries, ms each, one connection (the walk tests up to ${RECENT_WINDOW} rows a conversation), by how many messages (matching only 消息) this run sent atop each conversation, on top of what the data already had\n`);
  const fixed = (ms: number) => ms.toFixed(1);
  const rows = SEARCH_QUERIES.map((words, q) => [words, ...costs.map((step) => fixed(step[q]!))]);
  rows.push([`all ${SEARCH_QUERIES.length}`, ...costs.map((step) => fixed(step.reduce((sum, ms) => sum + ms, 0)))]);
  console.log(markdownTable(['query', ...atopCounts.map((atop) => `+${atop}`)], rows));
}

await main();
