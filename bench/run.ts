/**
 * `npm run bench`: every scenario of issue 3 in one run against the seeded
 * database at DATABASE_URL, each measured by a fresh load process, printed as
 * a table with the ratio of the full GraphQL path to the raw SQL floor; then
 * the retention purge's row (bench/purge.ts), live fan-out over WebSocket
 * (bench/fanout.ts) and search beside page reads (bench/search.ts).
 *
 * BENCH_SECONDS (default 15) sets each run's length.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { signToken } from '../src/auth/tokens.ts';
import { readConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/client.ts';
import { rowsOf } from '../src/db/rows.ts';
import type { RequestStats } from '../src/graphql/context.ts';
import { createLogger } from '../src/log.ts';
import { BENCH_DATA, HOT_CONVERSATION_ID } from '../src/seed/benchData.ts';
import { startServer } from '../src/server.ts';
import { FANOUT, FANOUT_HEADER, fanoutRows, measureFanout } from './fanout.ts';
import { BENCH_SECRET, startBenchServer } from './benchServer.ts';
import type { LoadResult } from './loadResult.ts';
import { measurePurge, purgeRows } from './purge.ts';
import { type PageScenario, pageRequest, type SendScenario, sendConversations } from './scenarios.ts';
import { measureSearch, SEARCH_HEADER, searchRows, searchSummary } from './search.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) {
  process.stderr.write('npm run bench needs DATABASE_URL (a PostgreSQL seeded with `npm run bench:seed`).\n');
  process.exit(1);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const SECRET = BENCH_SECRET;
const PAGE_SCENARIOS: [PageScenario, string][] = [
  ['random-newest', '(a) newest page, random conversations'],
  ['hot-newest', '(b) newest page, hot conversation'],
  ['hot-deep', '(c) 400,000 deep via before:'],
  ['hot-around', '(d) messagesAround 400,000 deep'],
];
const SEND_SCENARIOS: [SendScenario, string][] = [
  ['send-hot', '(a) one hot conversation'],
  ['send-spread', '(b) 1,000 conversations'],
];

const log = (line: string) => process.stdout.write(`${line}\n`);

/** One row of a results table: the full path, its raw SQL twin, and their ratio. */
function tableRow(label: string, full: LoadResult, raw: LoadResult): string[] {
  const ms = (value: number) => value.toFixed(2);
  return [
    label,
    full.perSecond.toFixed(0),
    ms(full.p50),
    ms(full.p99),
    raw.perSecond.toFixed(0),
    ms(raw.p50),
    ms(raw.p99),
    (full.perSecond / raw.perSecond).toFixed(2),
    String(full.failures + raw.failures),
  ];
}

/** Runs one load process and reads its JSON line. */
function load(script: string, args: string[]): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      env: { ...process.env, JWT_SECRET: SECRET },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) reject(new Error(`${script} ${args.join(' ')} exited ${code}: ${out}`));
      else resolve(JSON.parse(line) as LoadResult);
    });
  });
}

const db = await openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 2 });
const [hot] = rowsOf<{ max_seq: number }>(await db.db.execute(sql`select max_seq from conversations where id = ${HOT_CONVERSATION_ID}`));
if (!hot || hot.max_seq < BENCH_DATA.hotMessages) {
  process.stderr.write('The benchmark data is missing: run `npm run bench:seed` against this DATABASE_URL first.\n');
  process.exit(1);
}

// 1. Statements and loader batches per request, from the counters the tests use.
log('measuring SQL statements and loader batches per request...');
const config = readConfig({ JWT_SECRET: SECRET, NODE_ENV: 'production' });
if (!config.ok) throw new Error(config.problems.join(' '));
const seen: RequestStats[] = [];
const probe = await startServer(
  { config: config.config, client: db.client, jwtSecret: SECRET, logger: createLogger('silent'), onRequestStats: (s) => seen.push(s) },
  0,
);
const costs: Record<string, string> = {};
for (const [scenario] of PAGE_SCENARIOS) {
  const r = pageRequest(scenario);
  const response = await fetch(probe.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await signToken(SECRET, r.userId, 60)}` },
    body: r.body,
  });
  const body = await response.text();
  if (body.includes('"errors"')) throw new Error(`${scenario} failed: ${body.slice(0, 300)}`);
  const stats = seen.at(-1)!;
  costs[scenario] = `${stats.statements} statements, batches ${stats.batches.map((b) => `${b.loader}×${b.size}`).join(' ')}`;
}
await probe.stop();

// 2. The server under test, in its own process, as in production.
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const { url, process: server } = await startBenchServer(DATABASE_URL, WORKERS);
/** Peak resident memory (VmHWM) of each server process, primary first, in MB. */
const peakRssMb = (): number[] => {
  const children = readFileSync(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return [String(server.pid), ...children].map(
    (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024,
  );
};

log(`warming up the server (3 s)...`);
await load('bench/loadHttp.ts', ['hot-newest', url, '10', '3']);

const pageRows: string[][] = [];
const rates: Record<string, number> = {};
for (const [scenario, label] of PAGE_SCENARIOS) {
  log(`pages ${label}: raw SQL ${SECONDS} s...`);
  const raw = await load('bench/loadRaw.ts', [scenario, '10', String(SECONDS)]);
  log(`pages ${label}: GraphQL over HTTP ${SECONDS} s...`);
  const full = await load('bench/loadHttp.ts', [scenario, url, '10', String(SECONDS)]);
  rates[scenario] = full.perSecond;
  pageRows.push(tableRow(label, full, raw));
}

const sendRows: string[][] = [];
const denseProblems: string[] = [];
for (const [scenario, label] of SEND_SCENARIOS) {
  log(`sends ${label}: raw SQL ${SECONDS} s...`);
  const raw = await load('bench/loadRaw.ts', [scenario, '20', String(SECONDS)]);
  log(`sends ${label}: GraphQL over HTTP ${SECONDS} s...`);
  const full = await load('bench/loadHttp.ts', [scenario, url, '20', String(SECONDS)]);
  const broken = rowsOf<{ id: string }>(
    await db.db.execute(sql`select c.id from conversations c
      join (select conv_id, count(*) as n, max(seq) as top from messages where conv_id = any(${sql.param(sendConversations(scenario))}::uuid[]) group by conv_id) m
        on m.conv_id = c.id
      where m.n <> c.max_seq or m.top <> c.max_seq`),
  );
  if (broken.length > 0) denseProblems.push(`${label}: seqs not dense in ${broken.length} conversations`);
  sendRows.push(tableRow(label, full, raw));
}
const purge = await measurePurge(DATABASE_URL, SECONDS, () => load('bench/loadHttp.ts', ['hot-newest', url, '10', String(SECONDS)]), log).catch(
  (error: unknown) => {
    server.kill('SIGTERM');
    throw error;
  },
);
const fanout = await measureFanout(DATABASE_URL, url, SECRET, log).catch((error: unknown) => {
  server.kill('SIGTERM');
  throw error;
});
const search = await measureSearch(DATABASE_URL, url, SECRET, SECONDS, log).catch((error: unknown) => {
  server.kill('SIGTERM');
  throw error;
});
const rss = peakRssMb();
server.kill('SIGTERM');
await db.close();

const table = (header: string[], rows: string[][]) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i === 0 ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w - 1)}:-`)).join('|')}|`, ...rows.map(line)].join('\n');
};
const head = ['', 'req/s', 'p50 ms', 'p99 ms', 'raw req/s', 'raw p50', 'raw p99', 'of raw', 'failures'];
log(`\n## Page reads (50 messages, 10 connections, ${SECONDS} s each)\n`);
log(table(head, pageRows));
log(`\n## Sends (20 connections, ${SECONDS} s each)\n`);
log(table(['', 'msg/s', 'p50 ms', 'p99 ms', 'raw msg/s', 'raw p50', 'raw p99', 'of raw', 'failures'], sendRows));
log(`\n## Retention purge (\`backscroll purge\` of 1,000,000 expired messages while (b) runs, 10 connections, ${SECONDS} s)\n`);
log(table(['', 'measured', 'target', 'met'], purgeRows(purge)));
if (purge.purgeEndedFirst) log('\nThe purge ended before the page run did: part of "during the purge" ran without it.');
log(
  `\n## Live fan-out (${FANOUT.subscribers} subscribers of one group over WebSocket, one member sending ${FANOUT.messages} messages at ${FANOUT.perSecond}/s; latency from send to each delivery)\n`,
);
log(table(FANOUT_HEADER, fanoutRows(fanout)));
log(`\n## Search (\`search(query:, first: 20)\` as a member of 100 conversations, beside their newest pages; 10 connections, ${SECONDS} s each)\n`);
log(table(SEARCH_HEADER, searchRows(search)));
log('');
for (const line of searchSummary(search)) log(line);
log(`\n## Cost per page request\n`);
for (const [scenario, label] of PAGE_SCENARIOS) log(`- ${label}: ${costs[scenario]}`);
log(`\nServer: ${WORKERS} worker process(es); peak RSS per process (primary first): ${rss.map((mb) => `${mb.toFixed(0)} MB`).join(', ')}`);
log(denseProblems.length === 0 ? 'Seqs after the send runs: dense and unique in every conversation written.' : denseProblems.join('\n'));
log(
  `Depth: (c) ${((rates['hot-deep']! / rates['hot-newest']!) * 100).toFixed(0)}% and (d) ${((rates['hot-around']! / rates['hot-newest']!) * 100).toFixed(0)}% of (b)'s rate.`,
);
