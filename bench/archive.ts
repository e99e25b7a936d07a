/**
 * The archive row of `npm run bench` (issue 16), on a copy of the bench
 * database so the shared one is never written: `backscroll_archive_bench`,
 * made from it as a template when no one is connected to it, else seeded
 * afresh with the same data set, and dropped at the end. In it:
 *
 * (a) storage per million messages, all hot, then with every conversation
 *     archived but its newest 200 (table and index bytes of messages and
 *     message_bodies, the latter after `vacuum full`, and segment bytes);
 * (b) `backscroll archive --older-than 0s` in a child process: messages/s;
 * (c) the page 400,000 deep in the hot conversation (scenario (c)) hot,
 *     then archived with the cache warm (default ARCHIVE_CACHE_MB) and cold
 *     (ARCHIVE_CACHE_MB=0: every read fetches its segment, from a folder
 *     in the OS page cache; at 10 connections and at 1, where no read can
 *     share another's fetch), beside the raw SQL page before archiving; the
 *     servers' own metrics say how many reads hit the cache, fetched, or
 *     were cut short by the deadline;
 * (d) the newest page of the hot conversation (scenario (b)) before, while
 *     and after the archiver runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../src/db/client.ts';
import { rowsOf } from '../src/db/rows.ts';
import { createRunner } from '../src/db/runner.ts';
import { readArchiveTotals } from '../src/metrics/archiveMetrics.ts';
import { startBenchServer } from './benchServer.ts';
import type { LoadResult } from './loadResult.ts';
import { type Cell, num, percent, type ResultTable, words } from './table.ts';

const COPY_DATABASE = 'backscroll_archive_bench';
const ARCHIVE_TARGET_PER_SECOND = 20_000;
const WARM_TARGET = 0.5;
const COLD_P99_TARGET_MS = 800;
const PAGE_RATE_TARGET = 0.9;
const MB = 1024 * 1024;

/** Runs one load process (`bench/loadHttp.ts` or `bench/loadRaw.ts`) with `env` added to its environment. */
export type LoadRun = (script: string, args: string[], env: Record<string, string>) => Promise<LoadResult>;

/** Bytes of a table (heap and TOAST) and of its indexes. */
interface RelationBytes {
  table: number;
  indexes: number;
}

/** What the database holds at one moment. */
interface Storage {
  messages: number;
  index: RelationBytes;
  bodies: RelationBytes;
  archivedMessages: number;
  segments: number;
  segmentBytes: number;
}

/** What the archive's read counters moved by during one load run (from the server's /metrics). */
interface ArchiveReads {
  hits: number;
  misses: number;
  fetches: number;
  fetchSeconds: number;
  timeouts: number;
  unreadable: number;
}

/** What the archive row measured. */
export interface ArchiveMeasurement {
  /** How the copy was made. */
  copy: 'template' | 'seed';
  hot: Storage;
  archived: Storage;
  archivePerSecond: number;
  archiveSeconds: number;
  deep: {
    raw: LoadResult;
    hot: LoadResult;
    warm: LoadResult;
    cold: LoadResult;
    /** One connection: no read can share another's fetch, so every page fetches its segment. */
    coldAlone: LoadResult;
    warmReads: ArchiveReads;
    coldReads: ArchiveReads;
    coldAloneReads: ArchiveReads;
  };
  /** Page reads without the archiver, before and after it: their mean is the baseline. */
  pagesBefore: LoadResult;
  pagesDuring: LoadResult;
  pagesAfter: LoadResult;
  /** The archiver ended before the page run did, so part of that run was without it. */
  archiveEndedFirst: boolean;
}

/** `url` naming database `name` instead. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The environment for our child processes: no archive settings but `archive`. */
function childEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(ARCHIVE_|PURGE_|RETENTION_)/.test(name)));
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}

/** Runs `node bin/backscroll.js ...args`, each output line to `onLine`; resolves with its whole output, rejects on a non-zero exit. */
function runCli(args: string[], env: Record<string, string | undefined>, onLine: (line: string) => void): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, ['bin/backscroll.js', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) onLine(line);
  });
  const done = new Promise<string>((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`backscroll ${args.join(' ')} exited ${code}:\n${output.slice(-2000)}`))));
  });
  return { child, done };
}

/** Makes the copy: from `source` as a template when no one is connected to it, else an empty database seeded with the bench data. */
async function makeCopy(databaseUrl: string, source: string, log: (line: string) => void): Promise<'template' | 'seed'> {
  const admin = await openDatabase({ kind: 'postgres', url: withDatabase(databaseUrl, 'postgres'), poolSize: 1, statementTimeoutMs: 0 });
  try {
    await admin.db.execute(sql.raw(`drop database if exists ${COPY_DATABASE} with (force)`));
    log(`archive: copying ${source} to ${COPY_DATABASE} (template)...`);
    const started = Date.now();
    try {
      await admin.db.execute(sql.raw(`create database ${COPY_DATABASE} template ${source}`));
      log(`archive: copied in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return 'template';
    } catch (error) {
      // PostgreSQL copies a template only while no one else is connected to it (the bench's own server is, in a full run).
      const cause = (error as Error & { cause?: Error }).cause ?? (error as Error);
      log(`archive: cannot copy (${cause.message}); seeding ${COPY_DATABASE} with the bench data instead`);
      await admin.db.execute(sql.raw(`create database ${COPY_DATABASE}`));
    }
  } finally {
    await admin.close();
  }
  await runCli(['seed', '--bench'], childEnv({ DATABASE_URL: withDatabase(databaseUrl, COPY_DATABASE) }), (line) => log(`archive: ${line}`)).done;
  return 'seed';
}

async function dropCopy(databaseUrl: string): Promise<void> {
  const admin = await openDatabase({ kind: 'postgres', url: withDatabase(databaseUrl, 'postgres'), poolSize: 1, statementTimeoutMs: 0 });
  try {
    await admin.db.execute(sql.raw(`drop database if exists ${COPY_DATABASE} with (force)`));
  } finally {
    await admin.close();
  }
}

/** Sizes and counts of the index rows, the warm bodies and the archive. */
async function measureStorage(db: DatabaseHandle): Promise<Storage> {
  const relations = rowsOf<{ relname: string; table_bytes: string; index_bytes: string }>(
    await db.db.execute(sql`select relname, pg_table_size(oid) as table_bytes, pg_indexes_size(oid) as index_bytes
      from pg_class where relname in ('messages', 'message_bodies') and relkind = 'r' and relnamespace = 'public'::regnamespace`),
  );
  const bytesOf = (name: string): RelationBytes => {
    const row = relations.find((r) => r.relname === name)!;
    return { table: Number(row.table_bytes), indexes: Number(row.index_bytes) };
  };
  const [count] = rowsOf<{ n: number }>(await db.db.execute(sql`select count(*)::int8 as n from messages`));
  const totals = await readArchiveTotals(createRunner(db.client));
  return {
    messages: Number(count!.n),
    index: bytesOf('messages'),
    bodies: bytesOf('message_bodies'),
    archivedMessages: totals.messages,
    segments: totals.segments,
    segmentBytes: totals.bytes,
  };
}

/** Starts a bench server on the copy with `env` (archive settings) added; resolves once it serves. */
async function startServerWith(databaseUrl: string, workers: number, env: Record<string, string>): Promise<{ url: string; process: ChildProcess }> {
  // startBenchServer passes this process's environment on; it is read when the child is spawned.
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await startBenchServer(databaseUrl, workers);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  server.kill('SIGTERM');
  await exited;
}

/** The archive's read counters on the server at `url` (every worker's, summed by the primary). */
async function scrapeReads(url: string): Promise<ArchiveReads> {
  const token = process.env.METRICS_TOKEN;
  const response = await fetch(new URL('/metrics', url), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${text.slice(0, 200)}`);
  const value = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };
  const problems = ['missing', 'corrupt', 'unreachable', 'not-configured', 'timeout'];
  return {
    hits: value('backscroll_archive_cache_hits_total'),
    misses: value('backscroll_archive_cache_misses_total'),
    fetches: value('backscroll_archive_cold_fetches_total'),
    fetchSeconds: value('backscroll_archive_cold_fetch_duration_seconds_sum'),
    timeouts: value('backscroll_archive_unreadable_segments_total{problem="timeout"}'),
    unreadable: problems.reduce((sum, p) => sum + value(`backscroll_archive_unreadable_segments_total{problem="${p}"}`), 0),
  };
}

/** `run` between two scrapes of the server at `url`: its result and what the archive's counters moved by. */
async function withReads(url: string, run: () => Promise<LoadResult>): Promise<{ result: LoadResult; reads: ArchiveReads }> {
  const before = await scrapeReads(url);
  const result = await run();
  const after = await scrapeReads(url);
  const reads = Object.fromEntries(Object.keys(before).map((k) => [k, after[k as keyof ArchiveReads] - before[k as keyof ArchiveReads]])) as unknown as ArchiveReads;
  return { result, reads };
}

const ARCHIVE_SUMMARY = /archive: ([\d,]+) messages from [\d,]+ conversations in [\d,]+ segments \([\d,]+ bytes\) in ([\d.]+) s \(([\d,]+) messages\/s\)/;

/**
 * Measures the archive row against a copy of the database at `databaseUrl`
 * (never written), each load run `seconds` long through `load`, the
 * servers with `workers` processes. `log` reports progress.
 */
export async function measureArchive(
  databaseUrl: string,
  workers: number,
  seconds: number,
  load: LoadRun,
  log: (line: string) => void,
): Promise<ArchiveMeasurement> {
  const source = new URL(databaseUrl).pathname.slice(1);
  const copyUrl = withDatabase(databaseUrl, COPY_DATABASE);
  const folder = await mkdtemp(join(tmpdir(), 'backscroll-archive-bench-'));
  const servers: ChildProcess[] = [];
  let db: DatabaseHandle | null = null;
  try {
    const copy = await makeCopy(databaseUrl, source, log);
    db = await openDatabase({ kind: 'postgres', url: copyUrl, poolSize: 1, statementTimeoutMs: 0 });
    log('archive: (a) measuring storage with every body hot...');
    const hot = await measureStorage(db);
    const http = (scenario: string, url: string) => load('bench/loadHttp.ts', [scenario, url, '10', String(seconds)], {});
    const warmServer = await startServerWith(copyUrl, workers, { ARCHIVE_DIR: folder });
    servers.push(warmServer.process);
    log('archive: warming up the server on the copy (3 s)...');
    await load('bench/loadHttp.ts', ['hot-deep', warmServer.url, '10', '3'], {});
    log(`archive: (c) the page 400,000 deep, raw SQL, hot, ${seconds} s...`);
    const raw = await load('bench/loadRaw.ts', ['hot-deep', '10', String(seconds)], { DATABASE_URL: copyUrl });
    log(`archive: (c) the page 400,000 deep, GraphQL, hot, ${seconds} s...`);
    const deepHot = await http('hot-deep', warmServer.url);

    log(`archive: (d) newest page reads before archiving, ${seconds} s...`);
    const pagesBefore = await http('hot-newest', warmServer.url);
    log(`archive: (b) \`backscroll archive --older-than 0s\` of ${hot.messages.toLocaleString('en')} messages, and (d) newest page reads while it runs, ${seconds} s...`);
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    let lastProgress = 0;
    const archiver = runCli(['archive', '--older-than', '0s'], childEnv({ DATABASE_URL: copyUrl, ARCHIVE_DIR: folder }), (line) => {
      markStarted();
      // Its per-conversation lines are many; its progress lines come every few seconds.
      if (line.startsWith('archiving:') && Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now();
        log(`archive: ${line}`);
      }
    });
    let archiveEnded = false;
    void archiver.done.then(() => (archiveEnded = true), () => undefined);
    await Promise.race([started, archiver.done]);
    const pagesDuring = await http('hot-newest', warmServer.url);
    const archiveEndedFirst = archiveEnded;
    log('archive: waiting for the archiver to finish...');
    const output = await archiver.done;
    const summary = ARCHIVE_SUMMARY.exec(output);
    if (summary === null) throw new Error(`backscroll archive printed no summary:\n${output.slice(-2000)}`);
    const number = (text: string) => Number(text.replaceAll(',', ''));
    log(`archive: ${summary[0]}`);
    log(`archive: (d) newest page reads after archiving, ${seconds} s...`);
    const pagesAfter = await http('hot-newest', warmServer.url);

    log('archive: (c) warming the cache with the archived page (3 s)...');
    await load('bench/loadHttp.ts', ['hot-deep', warmServer.url, '10', '3'], {});
    log(`archive: (c) the page 400,000 deep, archived, cache warm, ${seconds} s...`);
    const warm = await withReads(warmServer.url, () => http('hot-deep', warmServer.url));
    await stopServer(warmServer.process);
    const coldServer = await startServerWith(copyUrl, workers, { ARCHIVE_DIR: folder, ARCHIVE_CACHE_MB: '0' });
    servers.push(coldServer.process);
    log(`archive: (c) the page 400,000 deep, archived, no cache (ARCHIVE_CACHE_MB=0), ${seconds} s...`);
    const cold = await withReads(coldServer.url, () => http('hot-deep', coldServer.url));
    log(`archive: (c) the same with 1 connection, so every page fetches its segment, ${seconds} s...`);
    const coldAlone = await withReads(coldServer.url, () => load('bench/loadHttp.ts', ['hot-deep', coldServer.url, '1', String(seconds)], {}));
    await stopServer(coldServer.process);

    log('archive: (a) vacuum full of message_bodies, then measuring storage archived...');
    await db.db.execute(sql`vacuum full analyze message_bodies`);
    const archived = await measureStorage(db);
    if (archived.archivedMessages !== number(summary[1]!)) {
      throw new Error(`archive_segments holds ${archived.archivedMessages} messages, the archiver said it archived ${summary[1]}`);
    }
    return {
      copy,
      hot,
      archived,
      archivePerSecond: number(summary[3]!),
      archiveSeconds: Number(summary[2]!),
      deep: {
        raw,
        hot: deepHot,
        warm: warm.result,
        cold: cold.result,
        coldAlone: coldAlone.result,
        warmReads: warm.reads,
        coldReads: cold.reads,
        coldAloneReads: coldAlone.reads,
      },
      pagesBefore,
      pagesDuring,
      pagesAfter,
      archiveEndedFirst,
    };
  } finally {
    for (const server of servers) await stopServer(server);
    await db?.close();
    log(`archive: dropping ${COPY_DATABASE} and the segments folder`);
    await dropCopy(databaseUrl);
    await rm(folder, { recursive: true, force: true });
  }
}

/** The archive row's tables: storage, throughput and the deep page, and page reads beside the archiver. */
export function archiveTables(m: ArchiveMeasurement, seconds: number): ResultTable[] {
  const met = (ok: boolean) => words(ok ? 'yes' : 'NO');
  const perMillion = (bytes: number, messages: number) => num(messages === 0 ? 0 : (bytes / messages) * 1e6 / MB, 1);
  const total = (s: Storage) => s.index.table + s.index.indexes + s.bodies.table + s.bodies.indexes + s.segmentBytes;
  const storageRow = (label: string, pick: (s: Storage) => number): { label: string; cells: Cell[] } => ({
    label,
    cells: [perMillion(pick(m.hot), m.hot.messages), perMillion(pick(m.archived), m.archived.messages)],
  });
  // What archiving a million messages takes off the warm tables, and what it puts in segments.
  const bodiesFreed = m.hot.bodies.table + m.hot.bodies.indexes - (m.archived.bodies.table + m.archived.bodies.indexes);
  const storage: ResultTable = {
    id: 'archive-storage',
    title: `Archive storage (MB per million messages; ${m.archived.archivedMessages.toLocaleString('en')} of ${m.archived.messages.toLocaleString('en')} archived, each conversation's newest 200 kept)`,
    header: ['', 'all hot', 'archived'],
    rows: [
      storageRow('messages (index rows): table', (s) => s.index.table),
      storageRow('messages: indexes', (s) => s.index.indexes),
      storageRow('message_bodies (texts, search vectors): table + TOAST', (s) => s.bodies.table),
      storageRow('message_bodies: indexes (GIN included)', (s) => s.bodies.indexes),
      storageRow('archive segments', (s) => s.segmentBytes),
      storageRow('total', total),
      {
        label: 'per million archived messages: warm bytes freed → segment bytes',
        cells: [perMillion(bodiesFreed, m.archived.archivedMessages), perMillion(m.archived.segmentBytes, m.archived.archivedMessages)],
      },
    ],
  };
  const { raw, hot, warm, cold, coldAlone, warmReads, coldReads, coldAloneReads } = m.deep;
  const pageRow = (label: string, r: LoadResult, extra: Cell[]) => ({
    label,
    cells: [num(r.perSecond), num(r.p50, 2), num(r.p99, 2), num(r.perSecond / raw.perSecond, 2), num(r.perSecond / hot.perSecond, 2), num(r.failures), ...extra],
  });
  const readsCells = (reads: ArchiveReads, requests: number): Cell[] => [
    percent(reads.hits + reads.misses === 0 ? 0 : reads.hits / (reads.hits + reads.misses)),
    num(requests === 0 ? 0 : reads.fetches / requests, 2),
    reads.fetches === 0 ? words('') : num((reads.fetchSeconds / reads.fetches) * 1000, 2),
    num(reads.unreadable),
  ];
  const none = [words(''), words(''), words(''), words('')];
  const deep: ResultTable = {
    id: 'archive-deep',
    title: `Archived page 400,000 deep (scenario (c), 10 connections, ${seconds} s each)`,
    header: ['', 'req/s', 'p50 ms', 'p99 ms', 'of raw', 'of hot', 'failures', 'cache hits', 'fetches/page', 'fetch ms', 'unreadable'],
    rows: [
      pageRow('raw SQL, hot (before archiving)', raw, none),
      pageRow('GraphQL, hot (before archiving)', hot, none),
      pageRow('GraphQL, archived, cache warm', warm, readsCells(warmReads, warm.requests)),
      pageRow('GraphQL, archived, no cache (ARCHIVE_CACHE_MB=0)', cold, readsCells(coldReads, cold.requests)),
      pageRow('same, 1 connection', coldAlone, readsCells(coldAloneReads, coldAlone.requests)),
    ],
  };
  const alone = (m.pagesBefore.perSecond + m.pagesAfter.perSecond) / 2;
  const kept = m.pagesDuring.perSecond / alone;
  const warmRatio = warm.perSecond / hot.perSecond;
  const unreadable = warmReads.unreadable + coldReads.unreadable + coldAloneReads.unreadable;
  const failures = [raw, hot, warm, cold, coldAlone, m.pagesBefore, m.pagesDuring, m.pagesAfter].reduce((sum, r) => sum + r.failures, 0);
  const targets: ResultTable = {
    id: 'archive',
    title: `Archive (\`backscroll archive --older-than 0s\` on a copy of the bench data; (b) page reads ${seconds} s each)`,
    header: ['', 'measured', 'target', 'met'],
    rows: [
      { label: 'archive, messages/s', cells: [num(m.archivePerSecond), words(`≥ ${ARCHIVE_TARGET_PER_SECOND.toLocaleString('en')}`), met(m.archivePerSecond >= ARCHIVE_TARGET_PER_SECOND)] },
      { label: 'deep page, cache warm, of the same page hot', cells: [num(warmRatio, 2), words(`≥ ${WARM_TARGET}`), met(warmRatio >= WARM_TARGET)] },
      { label: 'deep page, no cache, p99 ms (10 connections)', cells: [num(cold.p99), words(`≤ ${COLD_P99_TARGET_MS}`), met(cold.p99 <= COLD_P99_TARGET_MS && coldReads.timeouts === 0)] },
      { label: 'deep page, no cache, p99 ms (1 connection)', cells: [num(coldAlone.p99), words(`≤ ${COLD_P99_TARGET_MS}`), met(coldAlone.p99 <= COLD_P99_TARGET_MS && coldAloneReads.timeouts === 0)] },
      { label: '(b) page req/s before archiving', cells: [num(m.pagesBefore.perSecond), words(''), words('')] },
      { label: '(b) page req/s while archiving', cells: [num(m.pagesDuring.perSecond), words(''), words('')] },
      { label: '(b) page req/s after archiving', cells: [num(m.pagesAfter.perSecond), words(''), words('')] },
      { label: 'page rate kept (during / mean of before and after)', cells: [percent(kept), words(`≥ ${PAGE_RATE_TARGET * 100}%`), met(kept >= PAGE_RATE_TARGET)] },
      { label: 'failed requests, unreadable segment reads', cells: [num(failures + unreadable), words('0'), met(failures + unreadable === 0)] },
    ],
  };
  return [targets, storage, deep];
}
