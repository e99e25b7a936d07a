/**
 * `npm run bench`: the scenarios of issue 3 against the seeded database at
 * DATABASE_URL, each measured by a fresh load process and printed as a
 * table with the ratio of the full GraphQL path to the raw SQL floor
 * (pages, sends); then the retention purge (bench/purge.ts), live fan-out
 * over WebSocket (bench/fanout.ts) and search beside page reads
 * (bench/search.ts), groups of 10 and 10,000 members (bench/groups.ts),
 * the newest page of a member who hid nearly everything (bench/hides.ts),
 * the first inbox page of a member of 50,000 conversations against one of
 * 20 in a database of its own (bench/inbox.ts), the cold archive on a copy
 * of the database (bench/archive.ts), and page reads and read-your-writes
 * with a streaming replica on throwaway clusters of their own
 * (bench/replicas.ts; `--only replicas` needs no DATABASE_URL).
 * Every run also writes its figures to bench/results/<date>-<commit>.json;
 * `npm run bench:compare A B` sets two runs side by side.
 *
 *   npm run bench                          every section
 *   npm run bench -- --only pages,sends    some of pages, sends, purge, fanout, search, groups, hides, inbox, archive, replicas
 *
 * BENCH_SECONDS (default 15) sets each run's length, BENCH_WORKERS (default
 * 2) the server's processes.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { signToken } from '../src/auth/tokens.ts';
import { readConfig } from '../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../src/db/client.ts';
import { rowsOf } from '../src/db/rows.ts';
import type { RequestStats } from '../src/graphql/context.ts';
import { createLogger } from '../src/log.ts';
import { BENCH_DATA, HOT_CONVERSATION_ID } from '../src/seed/benchData.ts';
import { startServer } from '../src/server.ts';
import { archiveTables, measureArchive } from './archive.ts';
import { BENCH_SECRET, serverCpuMs, serverPids, startBenchServer } from './benchServer.ts';
import { fanoutTable, measureFanout } from './fanout.ts';
import { groupsTables, measureGroups } from './groups.ts';
import { hidesTables, measureHides } from './hides.ts';
import { inboxTables, measureInbox } from './inbox.ts';
import type { LoadResult } from './loadResult.ts';
import { parseBenchArgs, type Section } from './options.ts';
import { measurePurge, purgeTable } from './purge.ts';
import { measureReplicas, replicasTables } from './replicas.ts';
import { type BenchRun, gitState, type SectionResult, writeRun } from './results.ts';
import { type PageScenario, pageRequest, type SendScenario, sendConversations } from './scenarios.ts';
import { measureSearch, searchTables } from './search.ts';
import { type Cell, num, percent, printTable, type ResultTable, type TableRow, words } from './table.ts';
import { WARM_UP_SECONDS, type WarmUpSlice, warmedUp } from './warmUp.ts';

const parsed = parseBenchArgs(process.argv.slice(2));
if (!parsed.ok) {
  process.stderr.write(`${parsed.problem}\n`);
  process.exit(1);
}
const { sections } = parsed.options;
/** Sections that make their own throwaway clusters: they need neither DATABASE_URL nor the seeded data set. */
const SELF_CONTAINED: readonly Section[] = ['replicas'];
const needsSharedDatabase = sections.some((section) => !SELF_CONTAINED.includes(section));
const DATABASE_URL = process.env.DATABASE_URL;
if (needsSharedDatabase && !DATABASE_URL) {
  process.stderr.write('npm run bench needs DATABASE_URL (a PostgreSQL seeded with `npm run bench:seed`).\n');
  process.exit(1);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
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

/** The cells of one row of a results table: the full path, its raw SQL twin, and their ratio. */
function loadCells(full: LoadResult, raw: LoadResult): Cell[] {
  return [
    num(full.perSecond),
    num(full.p50, 2),
    num(full.p99, 2),
    num(raw.perSecond),
    num(raw.p50, 2),
    num(raw.p99, 2),
    num(full.perSecond / raw.perSecond, 2),
    num(full.failures + raw.failures),
  ];
}

/** Runs one load process (with `env` added to its environment) and reads its JSON line (a LoadResult unless said otherwise). */
function load<T = LoadResult>(script: string, args: string[], env: Record<string, string> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      env: { ...process.env, JWT_SECRET: SECRET, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) reject(new Error(`${script} ${args.join(' ')} exited ${code}: ${out}`));
      else resolve(JSON.parse(line) as T);
    });
  });
}

/**
 * Warms the server with the hot conversation's newest page (10
 * connections, 3 s slices) until its CPU per request stops falling
 * (bench/warmUp.ts says why); answers the slices.
 */
async function warmUpServer(url: string, serverPid: number): Promise<WarmUpSlice[]> {
  const slices: WarmUpSlice[] = [];
  do {
    const cpuBefore = serverCpuMs(serverPid);
    const result = await load('bench/loadHttp.ts', ['hot-newest', url, '10', String(WARM_UP_SECONDS)]);
    const slice = { perSecond: result.perSecond, serverMicrosPerRequest: ((serverCpuMs(serverPid) - cpuBefore) * 1000) / result.requests };
    slices.push(slice);
    log(`warming up the server: slice ${slices.length} (${WARM_UP_SECONDS} s), ${slice.perSecond.toFixed(0)} req/s, ${slice.serverMicrosPerRequest.toFixed(0)} µs of server CPU per request`);
  } while (!warmedUp(slices));
  return slices;
}

/** Statements and loader batches per page request, from the counters the tests use, on a server in this process. */
async function pageCosts(db: DatabaseHandle): Promise<Record<string, RequestStats>> {
  const config = readConfig({ JWT_SECRET: SECRET, NODE_ENV: 'production' });
  if (!config.ok) throw new Error(config.problems.join(' '));
  const seen: RequestStats[] = [];
  const probe = await startServer(
    { config: config.config, client: db.client, jwtSecret: SECRET, logger: createLogger('silent'), onRequestStats: (s) => seen.push(s) },
    0,
  );
  const costs: Record<string, RequestStats> = {};
  try {
    for (const [scenario] of PAGE_SCENARIOS) {
      const r = pageRequest(scenario);
      const response = await fetch(probe.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await signToken(SECRET, r.userId, 60)}` },
        body: r.body,
      });
      const body = await response.text();
      if (body.includes('"errors"')) throw new Error(`${scenario} failed: ${body.slice(0, 300)}`);
      costs[scenario] = seen.at(-1)!;
    }
  } finally {
    await probe.stop();
  }
  return costs;
}

/** Pages: the four page scenarios, raw SQL then GraphQL over HTTP; their depth ratios; their cost per request. */
async function runPages(db: DatabaseHandle, url: string): Promise<SectionResult> {
  log(`== pages: ${PAGE_SCENARIOS.length} scenarios, raw SQL and GraphQL over HTTP, ${SECONDS} s each`);
  log('pages: measuring SQL statements and loader batches per request...');
  const costs = await pageCosts(db);
  const rows: TableRow[] = [];
  const measurements: Record<string, { full: LoadResult; raw: LoadResult; cost: RequestStats }> = {};
  for (const [scenario, label] of PAGE_SCENARIOS) {
    log(`pages ${label}: raw SQL ${SECONDS} s...`);
    const raw = await load('bench/loadRaw.ts', [scenario, '10', String(SECONDS)]);
    log(`pages ${label}: GraphQL over HTTP ${SECONDS} s...`);
    const full = await load('bench/loadHttp.ts', [scenario, url, '10', String(SECONDS)]);
    measurements[scenario] = { full, raw, cost: costs[scenario]! };
    rows.push({ label, cells: loadCells(full, raw) });
  }
  const rateOf = (scenario: PageScenario) => measurements[scenario]!.full.perSecond;
  const tables: ResultTable[] = [
    {
      id: 'pages',
      title: `Page reads (50 messages, 10 connections, ${SECONDS} s each)`,
      header: ['', 'req/s', 'p50 ms', 'p99 ms', 'raw req/s', 'raw p50', 'raw p99', 'of raw', 'failures'],
      rows,
    },
    {
      id: 'depth',
      title: "Depth (rate of the deep reads against (b)'s)",
      header: ['', "of (b)'s rate"],
      rows: PAGE_SCENARIOS.slice(2).map(([scenario, label]) => ({ label, cells: [percent(rateOf(scenario) / rateOf('hot-newest'))] })),
    },
    {
      id: 'cost',
      title: 'Cost per page request',
      header: ['', 'statements', 'loader batches'],
      rows: PAGE_SCENARIOS.map(([scenario, label]) => {
        const cost = costs[scenario]!;
        return { label, cells: [num(cost.statements), words(cost.batches.map((b) => `${b.loader}×${b.size}`).join(' '))] };
      }),
    },
  ];
  return { tables, notes: [], measurements };
}

/** Sends: both send scenarios, raw SQL then GraphQL, then a check that the seqs they wrote are dense. */
async function runSends(db: DatabaseHandle, url: string): Promise<SectionResult> {
  log(`== sends: ${SEND_SCENARIOS.length} scenarios, raw SQL and GraphQL over HTTP, ${SECONDS} s each`);
  const rows: TableRow[] = [];
  const problems: string[] = [];
  const measurements: Record<string, { full: LoadResult; raw: LoadResult }> = {};
  for (const [scenario, label] of SEND_SCENARIOS) {
    log(`sends ${label}: raw SQL ${SECONDS} s...`);
    const raw = await load('bench/loadRaw.ts', [scenario, '20', String(SECONDS)]);
    log(`sends ${label}: GraphQL over HTTP ${SECONDS} s...`);
    const full = await load('bench/loadHttp.ts', [scenario, url, '20', String(SECONDS)]);
    log(`sends ${label}: checking the seqs written are dense...`);
    const broken = rowsOf<{ id: string }>(
      await db.db.execute(sql`select c.id from conversations c
        join (select conv_id, count(*) as n, max(seq) as top from messages where conv_id = any(${sql.param(sendConversations(scenario))}::uuid[]) group by conv_id) m
          on m.conv_id = c.id
        where m.n <> c.max_seq or m.top <> c.max_seq`),
    );
    if (broken.length > 0) problems.push(`${label}: seqs not dense in ${broken.length} conversations`);
    measurements[scenario] = { full, raw };
    rows.push({ label, cells: loadCells(full, raw) });
  }
  const table: ResultTable = {
    id: 'sends',
    title: `Sends (20 connections, ${SECONDS} s each)`,
    header: ['', 'msg/s', 'p50 ms', 'p99 ms', 'raw msg/s', 'raw p50', 'raw p99', 'of raw', 'failures'],
    rows,
  };
  const notes = problems.length === 0 ? ['Seqs after the send runs: dense and unique in every conversation written.'] : problems;
  return { tables: [table], notes, measurements };
}

/** Purge: `backscroll purge` of 1,000,000 expired messages while (b)'s page reads run. */
async function runPurge(url: string): Promise<SectionResult> {
  log(`== purge: insert 1,000,000 expired messages, then (b) page reads before, during and after \`backscroll purge\`, ${SECONDS} s each`);
  const m = await measurePurge(DATABASE_URL!, SECONDS, () => load('bench/loadHttp.ts', ['hot-newest', url, '10', String(SECONDS)]), log);
  const notes = m.purgeEndedFirst ? ['The purge ended before the page run did: part of "during the purge" ran without it.'] : [];
  return { tables: [purgeTable(m, SECONDS)], notes, measurements: m };
}

/** Fan-out: subscribers over WebSocket receiving one member's sends. */
async function runFanout(url: string, serverCpu: () => number): Promise<SectionResult> {
  log('== fanout: 500 subscribers over WebSocket, 200 sends at 20/s');
  const m = await measureFanout(DATABASE_URL!, url, SECRET, log, serverCpu);
  return { tables: [fanoutTable(m)], notes: [], measurements: m };
}

/** Search: search beside the newest pages of the search user's conversations. */
async function runSearch(url: string): Promise<SectionResult> {
  log(`== search: search(first: 20) with and without a filter, and newest pages, as the search user, ${SECONDS} s each`);
  const m = await measureSearch(DATABASE_URL!, url, SECRET, SECONDS, log);
  return { tables: searchTables(m, SECONDS), notes: [], measurements: m };
}

/** Groups: send, pages with and without receipts, markRead and the member list in groups of 10 and 10,000 members. */
async function runGroups(url: string): Promise<SectionResult> {
  log(`== groups: 5 operations in groups of 10 and 10,000 members, ${SECONDS} s each`);
  const m = await measureGroups(DATABASE_URL!, url, SECRET, SECONDS, log);
  return { tables: groupsTables(m, SECONDS), notes: [], measurements: m };
}

/** Hides: the newest page of a member who deleted 19,900 of 20,000 messages for themselves, and another's, before and after analyze. */
async function runHides(): Promise<SectionResult> {
  log('== hides: newest pages of a member who hid 19,900 of 20,000 messages and of another, before and after analyze');
  const m = await measureHides(DATABASE_URL!, log);
  return { tables: hidesTables(m), notes: [], measurements: m };
}

/** Inbox: the first page of a member of 50,000 conversations against one of 20, and sends by group size, in a database of its own. */
async function runInbox(): Promise<SectionResult> {
  log('== inbox: first inbox page of members of 50,000 and 20 conversations, and sends by group size, in a database of its own');
  const m = await measureInbox(DATABASE_URL!, WORKERS, log);
  return { tables: inboxTables(m), notes: [], measurements: m };
}

/** Archive: storage, throughput, the page 400,000 deep archived (cache warm and cold), and (b) beside the archiver, on a copy of the database. */
async function runArchive(): Promise<SectionResult> {
  log(`== archive: on a copy of the database, storage hot and archived, \`backscroll archive\` beside (b)'s page reads, and the page 400,000 deep hot, warm and cold, ${SECONDS} s each`);
  const m = await measureArchive(DATABASE_URL!, WORKERS, SECONDS, load, log);
  const notes = [
    ...(m.copy === 'seed' ? ['The copy was seeded afresh with the bench data (the shared database had other connections, so it could not be a template).'] : []),
    ...(m.archiveEndedFirst ? ['The archiver ended before the page run did: part of "while archiving" ran without it.'] : []),
  ];
  return { tables: archiveTables(m, SECONDS), notes, measurements: m };
}

/** Replicas: page reads with a streaming replica and without, and read-your-writes under load, on throwaway clusters. */
async function runReplicas(): Promise<SectionResult> {
  log(`== replicas: a throwaway primary and its streaming replica; (b) page reads with and without the replica, then send-then-read clients, ${SECONDS} s each`);
  const m = await measureReplicas(WORKERS, SECONDS, load, log);
  const missed = m.fresh.filter((run) => run.token).reduce((sum, run) => sum + run.result.missed, 0);
  const notes = [missed === 0 ? 'Reads with the send\'s token that missed their send: 0 (the guarantee held).' : `Reads with the send's token that missed their send: ${missed} (the guarantee did NOT hold).`];
  return { tables: replicasTables(m, SECONDS), notes, measurements: m };
}

const run: BenchRun = {
  ...gitState(),
  date: new Date().toISOString(),
  settings: { seconds: SECONDS, workers: WORKERS, sections },
  sections: {},
};
log(`bench: ${sections.join(', ')} at ${run.commit.slice(0, 7)}${run.dirty ? ' (with uncommitted changes)' : ''}, ${SECONDS} s per load run, ${WORKERS} server processes`);

/** Every section asked, against the seeded database at `databaseUrl` and the server under test on it. */
async function runOnSharedDatabase(databaseUrl: string): Promise<void> {
  const db = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 2 });
  const [hot] = rowsOf<{ max_seq: number }>(await db.db.execute(sql`select max_seq from conversations where id = ${HOT_CONVERSATION_ID}`));
  if (!hot || hot.max_seq < BENCH_DATA.hotMessages) {
    process.stderr.write('The benchmark data is missing: run `npm run bench:seed` against this DATABASE_URL first.\n');
    process.exit(1);
  }

  // The server under test, in its own process, as in production.
  const { url, process: server } = await startBenchServer(databaseUrl, WORKERS);
  /** Peak resident memory (VmHWM) of each server process, primary first, in MB. */
  const peakRssMb = (): number[] => {
    return serverPids(server.pid!).map(
      (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024,
    );
  };
  const runners: Record<Section, () => Promise<SectionResult>> = {
    pages: () => runPages(db, url),
    sends: () => runSends(db, url),
    purge: () => runPurge(url),
    fanout: () => runFanout(url, () => serverCpuMs(server.pid!)),
    search: () => runSearch(url),
    groups: () => runGroups(url),
    hides: () => runHides(),
    inbox: () => runInbox(),
    archive: () => runArchive(),
    // Its own clusters and servers: the shared server stays up but idle meanwhile.
    replicas: () => runReplicas(),
  };
  try {
    const warmUp = await warmUpServer(url, server.pid!);
    for (const section of sections) run.sections[section] = await runners[section]();
    const rss = peakRssMb();
    run.sections.server = {
      tables: [
        {
          id: 'server',
          title: `Server (${WORKERS} worker process(es))`,
          header: ['', 'peak RSS MB'],
          rows: rss.map((mb, i) => ({ label: i === 0 ? 'primary' : `worker ${i}`, cells: [num(mb)] })),
        },
        {
          id: 'warmup',
          title: `Server warm-up (hot conversation, ${WARM_UP_SECONDS} s slices, until its CPU per request stops falling)`,
          header: ['', 'req/s', 'server µs/request'],
          rows: warmUp.map((slice, i) => ({ label: `slice ${i + 1}`, cells: [num(slice.perSecond), num(slice.serverMicrosPerRequest)] })),
        },
      ],
      notes: [],
      measurements: { peakRssMb: rss, warmUp },
    };
  } finally {
    server.kill('SIGTERM');
    await db.close();
  }
}

if (needsSharedDatabase) await runOnSharedDatabase(DATABASE_URL!);
else run.sections.replicas = await runReplicas();

for (const result of Object.values(run.sections)) {
  for (const table of result.tables) log(`\n${printTable(table)}`);
  if (result.notes.length > 0) log(`\n${result.notes.join('\n')}`);
}
const path = writeRun(run);
log(`\nResults: ${path} (compare two runs with \`npm run bench:compare A B\`)`);
