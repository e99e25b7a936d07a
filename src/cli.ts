/**
 * The `backscroll` command: `serve` (the default), `migrate`, `purge`,
 * `archive` and `token <userId>`. Reads the environment once, opens the database, and wires
 * the server; nothing imports this.
 */
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { archiveAgeMs, runArchivePass, tidyArchive } from './archive/pass.ts';
import { runInBackground } from './backgroundPriority.ts';
import { parseDuration } from './archive/duration.ts';
import { createArchiveReader, setProcessArchive } from './archive/reader.ts';
import { openSegmentStore } from './archive/segmentStore.ts';
import { verifyArchive } from './archive/verify.ts';
import { developmentSecret } from './auth/devSecret.ts';
import { signToken } from './auth/tokens.ts';
import { type Config, embedsSandboxToken, readConfig, SETTINGS } from './config.ts';
import { type DatabaseHandle, openDatabase } from './db/client.ts';
import { openReplicaSet, type ReplicaSet } from './db/replicaSet.ts';
import { failureText } from './db/failureText.ts';
import { applyMigrations, migrationStatus } from './db/migrate.ts';
import { createRunner } from './db/runner.ts';
import { ensureDemo } from './demo/createDemo.ts';
import { demoBanner, demoSandboxVariables } from './demo/demoBanner.ts';
import { DEMO_USERS } from './demo/demoTexts.ts';
import { limitHeapGrowth } from './heapGrowth.ts';
import { createLogger, type Logger } from './log.ts';
import { runPurgePass } from './purge.ts';
import { type PurgeSchedule, startPurgeSchedule } from './purgeSchedule.ts';
import { reportListening, runWorkers, workerSlot } from './workers.ts';
import { forwardWaitMs, joinSendForwarding } from './sendForwarding.ts';
import { SANDBOX_DOCUMENT } from './sandboxDocument.ts';
import { reindexSearch } from './search/reindex.ts';
import { BENCH_DATA, seedBenchData } from './seed/benchData.ts';
import { startServer } from './server.ts';

const DEV_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
const USAGE = `Usage: backscroll [serve [--no-demo] | migrate | purge | archive [--older-than <duration>] [--keep-newest <n>] | archive --verify |
                  reindex-search [--all] | token <userId> [--ttl <seconds>] [--admin] | seed --bench | help]

  serve            start the GraphQL server (the default); on an empty embedded database it first
                   creates a demo (users alice and bob, 1,000 messages) unless --no-demo
  migrate          apply database migrations (PostgreSQL; PGlite migrates itself)
  purge            delete expired messages and old change-feed entries, then exit
  archive          move the bodies of messages older than ARCHIVE_AFTER_DAYS (or --older-than, like 90d or 0s)
                   into archive segments, keeping each conversation's newest ARCHIVE_KEEP_NEWEST (or --keep-newest);
                   --verify checks every recorded segment and exits 1 naming the bad ones
  reindex-search   index the messages search cannot see yet (--all: every message, after a tokenizer change)
  token <userId>   print a signed token for that user (--admin: with the admin role)
  seed --bench     load the benchmark data set into DATABASE_URL
  help             print this

Settings (environment variables; the table of them in README.md says more):
${settingsTable()}`;

/** `SETTINGS` (src/config.ts) as aligned lines of name, default and meaning. */
function settingsTable(): string {
  const width = (values: string[]) => Math.max(...values.map((v) => v.length));
  const defaults = SETTINGS.map((s) => s.default ?? 'unset');
  const [nameWidth, defaultWidth] = [width(SETTINGS.map((s) => s.name)), width(defaults)];
  return SETTINGS.map((s, i) => `  ${s.name.padEnd(nameWidth)}  ${defaults[i]!.padEnd(defaultWidth)}  ${s.meaning}`).join('\n');
}

function fail(message: string): never {
  process.stderr.write(`backscroll: ${message}\n`);
  process.exit(1);
}

function loadConfig(): Config {
  const result = readConfig(process.env);
  if (!result.ok) fail(`the configuration is not valid:\n  - ${result.problems.join('\n  - ')}`);
  return result.config;
}

/** The HS256 secret: JWT_SECRET, else in development the data folder's own; null in production without one (key set only). */
function secretOf(config: Config): string | null {
  if (config.jwtSecret !== null) return config.jwtSecret;
  return config.production ? null : developmentSecret(config.dataDir);
}

/**
 * The configured database; `statementTimeoutMs` 0 lifts the statement
 * timeout (migrations may rewrite whole tables). `readPoolSize`: the read
 * pool's connections, for a server (commands that serve no queries open none).
 */
function open(config: Config, statementTimeoutMs = config.statementTimeoutMs, readPoolSize = 0): Promise<DatabaseHandle> {
  return openDatabase(
    config.databaseUrl
      ? { kind: 'postgres', url: config.databaseUrl, poolSize: config.poolSize, readPoolSize, statementTimeoutMs }
      : { kind: 'pglite', dataDir: resolve(config.dataDir, 'pglite') },
  );
}

/** The in-process purge over `handle` (PURGE_INTERVAL_SECONDS), or null when it is not set. */
function schedulePurge(config: Config, handle: DatabaseHandle, logger: Logger): PurgeSchedule | null {
  if (config.purgeIntervalSeconds === null) return null;
  const db = createRunner(handle.client);
  return startPurgeSchedule(config.purgeIntervalSeconds, (signal) => runPurgePass(db, config, logger, { signal }), logger);
}

/** The in-process archiver over `handle` (ARCHIVE_INTERVAL_SECONDS), or null when it is not set. */
function scheduleArchive(config: Config, handle: DatabaseHandle, logger: Logger): PurgeSchedule | null {
  if (config.archive.intervalSeconds === null) return null;
  const db = createRunner(handle.client);
  const store = openSegmentStore(config.archive.store, config.dataDir);
  // Failures are logged here, so the schedule (shared with the purge) never reports them as the purge's.
  const pass = (signal: AbortSignal) =>
    runArchivePass(db, store, config.archive, logger, { signal }).catch((error: unknown) => logger.error({ err: error }, 'archive failed'));
  return startPurgeSchedule(config.archive.intervalSeconds, pass, logger);
}

/** The read replicas of DATABASE_REPLICA_URLS, on PostgreSQL; none on PGlite, which has no replicas (said once in the log). */
async function openReplicas(config: Config, handle: DatabaseHandle, logger: Logger): Promise<ReplicaSet | undefined> {
  if (config.replicas.urls.length === 0) return undefined;
  if (handle.kind === 'pglite') {
    logger.warn('DATABASE_REPLICA_URLS is ignored: embedded PGlite has no replicas (set DATABASE_URL to use PostgreSQL)');
    return undefined;
  }
  const replicas = await openReplicaSet(config.replicas.urls, handle.client, {
    maxWaitMs: config.replicas.maxWaitMs,
    maxLagMs: config.replicas.maxLagMs,
    readTimeoutMs: config.replicas.readTimeoutMs,
    poolSize: config.poolSize,
    statementTimeoutMs: config.statementTimeoutMs,
    onChange: (report) => logger[report.state === 'in rotation' ? 'info' : 'warn'](report, 'a read replica changed state'),
  });
  logger.info({ replicas: replicas.count }, 'query operations read from replicas');
  return replicas;
}

async function serve(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { 'no-demo': { type: 'boolean' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  const config = loadConfig();
  limitHeapGrowth(config.heapGrowthPercent);
  // On PostgreSQL, migrating is a deliberate step: refuse to serve a database behind it.
  if (cluster.isPrimary && config.databaseUrl !== null) await ensureMigrated(config);
  if (cluster.isPrimary && config.workers > 1) {
    // The primary purges and archives, so the workers do not run one pass each at once.
    const purgeHandle = config.purgeIntervalSeconds === null && config.archive.intervalSeconds === null ? null : await open(config);
    const purging = purgeHandle && schedulePurge(config, purgeHandle, createLogger(config.logLevel));
    const archiving = purgeHandle && scheduleArchive(config, purgeHandle, createLogger(config.logLevel));
    await runWorkers(config.workers, (url) => {
      process.stdout.write(`backscroll is serving ${url} (PostgreSQL, ${config.workers} worker processes)\n`);
    });
    await purging?.stop();
    await archiving?.stop();
    await purgeHandle?.close();
    return;
  }
  // Archived bodies are read through this process's cache of decoded segments.
  setProcessArchive(createArchiveReader(openSegmentStore(config.archive.store, config.dataDir), config.archive.cacheBytes, config.archive.readTimeoutMs));
  const logger = createLogger(config.logLevel);
  const handle = await open(config, config.statementTimeoutMs, config.readPoolSize);
  if (handle.kind === 'pglite') await applyMigrations(handle);
  const replicas = await openReplicas(config, handle, logger);
  const secret = secretOf(config);
  // Tokens are made only with the generated development secret: JWT_SECRET is
  // a real deployment's key, and `backscroll token` signs with it on request.
  const devSecret = config.jwtSecret === null ? secret : null;
  const devToken = config.production || devSecret === null ? null : await signToken(devSecret, 'dev', DEV_TOKEN_TTL_SECONDS);
  // Development on PGlite only: a PostgreSQL database is never written to by a server starting.
  const demo =
    devToken !== null && handle.kind === 'pglite'
      ? await ensureDemo(createRunner(handle.client), {
          create: parsed.values['no-demo'] !== true,
          clock: { server: config.retention, now: new Date() },
          revokeWindowSeconds: config.revokeWindowSeconds,
        })
      : ({ kind: 'none' } as const);
  const demoTokens = demo.kind === 'none' ? [] : await Promise.all(DEMO_USERS.map((user) => signToken(devSecret!, user, DEV_TOKEN_TTL_SECONDS)));
  // The page hands its token to whoever loads it: the embedded demo only, on loopback unless HOST says otherwise.
  const sandbox =
    devToken === null || !embedsSandboxToken(config)
      ? undefined
      : demo.kind === 'none'
        ? { token: devToken, document: SANDBOX_DOCUMENT }
        : { token: demoTokens[0]!, document: SANDBOX_DOCUMENT, variables: demoSandboxVariables(demo) };
  const server = await startServer(
    {
      config,
      client: handle.client,
      readClient: handle.reads ?? undefined,
      replicas,
      jwtSecret: secret,
      logger,
      sandbox,
      sendForwarding: cluster.isWorker ? joinSendForwarding(workerSlot(), config.workers, forwardWaitMs(handle.client)) : undefined,
      readiness: async () => {
        const status = await migrationStatus(handle);
        return status.behind ? `the database has ${status.applied} of ${status.shipped} migrations; run \`backscroll migrate\`` : null;
      },
    },
    config.port,
  );
  // Started with no await before the handlers below, so shutting down always
  // stops a pass before closing the database. Workers leave it to the primary.
  const purging = cluster.isWorker ? null : schedulePurge(config, handle, logger);
  const archiving = cluster.isWorker ? null : scheduleArchive(config, handle, logger);
  // Before saying "serving": a process manager (or a test) that signals as
  // soon as it reads that line must find the handlers in place, or the
  // default action kills the process without closing the database.
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await purging?.stop();
    await archiving?.stop();
    await server.stop();
    await replicas?.close();
    await handle.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  if (cluster.isWorker) {
    reportListening(server.url);
  } else {
    const where = handle.kind === 'pglite' ? `PGlite in ${resolve(config.dataDir)}` : 'PostgreSQL';
    process.stdout.write(`backscroll is serving ${server.url} (${where})\n`);
  }
  if (demo.kind !== 'none') {
    process.stdout.write(demoBanner(demo, demoTokens, server.url));
  } else if (devToken && cluster.isPrimary) {
    process.stdout.write(
      `\nDevelopment token for user "dev" (valid 30 days; \`npx backscroll token <userId>\` makes others):\n` +
        `Authorization: Bearer ${devToken}\n\nOpen ${server.url} in a browser for Apollo Sandbox.\n`,
    );
  }
}

/** Refuses to go on (exit 1) when PostgreSQL is behind the shipped migrations. */
async function ensureMigrated(config: Config): Promise<void> {
  const handle = await open(config);
  const status = await migrationStatus(handle);
  await handle.close();
  if (status.behind) {
    fail(
      `the database has ${status.applied} of ${status.shipped} migrations applied. ` +
        'Run `npx backscroll migrate` first, then start the server again.',
    );
  }
}

/** Migrations that rewrite whole tables, and how long they take (measured on the 2,000,000-message benchmark data). */
const SLOW_MIGRATIONS: Record<string, string> = {
  '0004_keyed_search': 'rewrites every stored search vector: about 75 s per million messages',
};

async function migrate(): Promise<void> {
  const config = loadConfig();
  const handle = await open(config, 0);
  const before = await migrationStatus(handle);
  process.stdout.write(`migrations: ${before.applied} of ${before.shipped} applied; applying the rest...\n`);
  // One transaction, so there is no progress to count inside it: say what it is doing, and what takes long.
  for (const tag of before.pending) process.stdout.write(`migrations: applying ${tag}${SLOW_MIGRATIONS[tag] ? ` (${SLOW_MIGRATIONS[tag]})` : ''}\n`);
  await applyMigrations(handle);
  const after = await migrationStatus(handle);
  process.stdout.write(`migrations: ${after.applied} of ${after.shipped} applied; the database is up to date.\n`);
  await handle.close();
}

/**
 * Stops a maintenance command on a PGlite folder a server has open: PGlite
 * does not stop a second process from opening its folder, and two writing at
 * once corrupt it. `instead` names the setting that runs the job inside the server.
 */
function refuseOpenPgliteFolder(config: Config, instead: string): void {
  const pidFile = resolve(config.dataDir, 'pglite', 'postmaster.pid');
  if (config.databaseUrl === null && existsSync(pidFile)) {
    fail(
      `the PGlite data folder ${resolve(config.dataDir)} is open in another process (probably \`backscroll serve\`; ${pidFile} exists), ` +
        `and PGlite serves one process at a time. Stop that process first, or set ${instead} inside the server. ` +
        'If no process has the folder open (one was killed), delete that file.',
    );
  }
}

async function purge(): Promise<void> {
  runInBackground();
  const config = loadConfig();
  if (config.databaseUrl !== null) await ensureMigrated(config);
  refuseOpenPgliteFolder(config, 'PURGE_INTERVAL_SECONDS to purge');
  const handle = await open(config);
  if (handle.kind === 'pglite') await applyMigrations(handle);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const count = (n: number) => n.toLocaleString('en');
  const { days, maxMessages } = config.retention;
  say(
    `purge: the server keeps ${days === null ? 'messages of any age' : `${count(days)} days`} and ` +
      `${maxMessages === null ? 'any number of messages' : `the newest ${count(maxMessages)} messages`} per conversation ` +
      `(conversations may set shorter limits), and ${count(config.changeFeedDays)} days of change feed`,
  );
  // Ctrl-C finishes the batch in flight and closes the database; the next run carries on.
  const stopping = new AbortController();
  process.once('SIGINT', () => stopping.abort());
  process.once('SIGTERM', () => stopping.abort());
  let lastProgress = performance.now();
  const summary = await runPurgePass(createRunner(handle.client), config, createLogger('silent'), {
    signal: stopping.signal,
    onConversation: (r) => say(`purged ${count(r.messages)} messages from conversation ${r.convId} (through seq ${r.throughSeq})`),
    onBatch: (deleted) => {
      if (performance.now() - lastProgress < 5000) return;
      lastProgress = performance.now();
      say(`purging: ${count(deleted)} messages so far...`);
    },
  });
  await handle.close();
  // A script running this must see that the purge did not finish.
  if (summary.stopped) process.exitCode = 1;
  const rate = summary.seconds > 0 ? Math.round(summary.messages / summary.seconds) : 0;
  say(
    `purge${summary.stopped ? ' (stopped; run it again to finish)' : ''}: ${count(summary.messages)} messages from ` +
      `${count(summary.conversations)} conversations in ${summary.seconds.toFixed(1)} s (${count(rate)} messages/s); ` +
      `${count(summary.changesPruned)} change-feed entries pruned`,
  );
}

async function archive(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { 'older-than': { type: 'string' }, 'keep-newest': { type: 'string' }, verify: { type: 'boolean' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  const { 'older-than': olderThan, 'keep-newest': keepNewestText, verify } = parsed.values;
  if (verify && (olderThan !== undefined || keepNewestText !== undefined)) fail(`archive --verify takes no other option.\n${USAGE}`);
  const age = olderThan === undefined ? undefined : parseDuration('--older-than', olderThan);
  if (age !== undefined && !age.ok) fail(age.problem);
  const keepNewest = keepNewestText === undefined ? undefined : /^[0-9]{1,9}$/.test(keepNewestText) ? Number(keepNewestText) : Number.NaN;
  if (Number.isNaN(keepNewest)) fail(`--keep-newest takes a whole number of messages from 0 to 999999999, got "${keepNewestText}".`);
  runInBackground();
  const config = loadConfig();
  if (config.databaseUrl !== null) await ensureMigrated(config);
  refuseOpenPgliteFolder(config, 'ARCHIVE_INTERVAL_SECONDS to archive');
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const count = (n: number) => n.toLocaleString('en');
  const options = { olderThanMs: age?.ms, keepNewest };
  const ageMs = archiveAgeMs(config.archive, options);
  const handle = await open(config);
  if (handle.kind === 'pglite') await applyMigrations(handle);
  const db = createRunner(handle.client);
  const store = openSegmentStore(config.archive.store, config.dataDir);
  const segmentLines = {
    onOrphans: (removed: number) => say(`removed ${count(removed)} objects that no record names (emptied by purges or erasure, or written by an interrupted run)`),
    onDropped: (s: { key: string }) => say(`deleted segment ${s.key}: none of its messages is readable any more (purged, expired, revoked or erased)`),
    onRewritten: (before: { key: string; count: number }, after: { count: number; fromSeq: number; toSeq: number }) =>
      say(`rewrote segment ${before.key} with its ${count(after.count)} readable messages of ${count(before.count)} (seqs ${after.fromSeq} to ${after.toSeq})`),
  };
  if (!verify && ageMs === null) {
    // Switched off, archiving still owes what it archived before: purges and erasure reach those segments.
    const tidied = await tidyArchive(db, store, createLogger('silent'), segmentLines);
    await handle.close();
    const { dropped, rewritten } = tidied.reconciled;
    const what = dropped + rewritten + tidied.orphansRemoved === 0 ? 'nothing to do' : 'nothing new archived; segments from before were brought in line with purges and erasure';
    say(`archive: archiving is off (ARCHIVE_AFTER_DAYS is not set); ${what}. Pass --older-than <duration>, like 90d, to archive once.`);
    return;
  }
  if (verify) {
    say(`archive --verify: checking every recorded segment in ${store.location}...`);
    let lastProgress = performance.now();
    const { checked, bad } = await verifyArchive(db, store, (n) => {
      if (performance.now() - lastProgress < 5000) return;
      lastProgress = performance.now();
      say(`archive --verify: ${count(n)} segments checked so far...`);
    });
    await handle.close();
    for (const b of bad) say(`bad segment ${b.key} (conversation ${b.convId}, seqs ${b.fromSeq} to ${b.toSeq}): ${b.problem}`);
    if (bad.length > 0) {
      say(`archive --verify: ${count(bad.length)} of ${count(checked)} segments failed`);
      process.exitCode = 1;
    } else {
      say(`archive --verify: all ${count(checked)} segments are present and whole`);
    }
    return;
  }
  const keep = keepNewest ?? config.archive.keepNewest;
  say(
    `archive: the bodies of messages older than ${olderThan ?? `${count(config.archive.afterDays!)} days`}, ` +
      `except each conversation's newest ${count(keep)}, into ${store.location}`,
  );
  // Ctrl-C finishes the segment in flight and closes the database; the next run carries on.
  const stopping = new AbortController();
  process.once('SIGINT', () => stopping.abort());
  process.once('SIGTERM', () => stopping.abort());
  let lastProgress = performance.now();
  let soFar = 0;
  const summary = (await runArchivePass(db, store, config.archive, createLogger('silent'), {
    ...options,
    signal: stopping.signal,
    ...segmentLines,
    onSkipped: (convId, fromSeq, toSeq) => say(`skipped seqs ${fromSeq} to ${toSeq} of conversation ${convId}: they changed while being archived`),
    onConversation: (convId, t) => say(`archived ${count(t.messages)} messages of conversation ${convId} in ${count(t.segments)} segments`),
    onSegment: (segment) => {
      soFar += segment.count;
      if (performance.now() - lastProgress < 5000) return;
      lastProgress = performance.now();
      say(`archiving: ${count(soFar)} messages so far...`);
    },
  }))!;
  await handle.close();
  if (summary.stopped) process.exitCode = 1;
  if (summary.messages === 0 && !summary.stopped) {
    say('archive: nothing to archive');
    return;
  }
  const rate = summary.seconds > 0 ? Math.round(summary.messages / summary.seconds) : 0;
  say(
    `archive${summary.stopped ? ' (stopped; run it again to finish)' : ''}: ${count(summary.messages)} messages from ` +
      `${count(summary.conversations)} conversations in ${count(summary.segments)} segments (${count(summary.bytes)} bytes) ` +
      `in ${summary.seconds.toFixed(1)} s (${count(rate)} messages/s)`,
  );
}

async function reindex(args: string[]): Promise<void> {
  if (args.length > 1 || (args.length === 1 && args[0] !== '--all')) fail(`reindex-search takes only --all.\n${USAGE}`);
  const config = loadConfig();
  if (config.databaseUrl !== null) await ensureMigrated(config);
  const handle = await open(config);
  if (handle.kind === 'pglite') await applyMigrations(handle);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const stopping = new AbortController();
  process.once('SIGINT', () => stopping.abort());
  process.once('SIGTERM', () => stopping.abort());
  const summary = await runReindex(handle, say, { all: args[0] === '--all', signal: stopping.signal });
  await handle.close();
  if (summary.stopped) process.exitCode = 1;
}

/** Runs a reindex over `handle`, printing progress at most every 5 s, and the summary. */
async function runReindex(handle: DatabaseHandle, say: (line: string) => void, options: { all?: boolean; signal?: AbortSignal } = {}) {
  const count = (n: number) => n.toLocaleString('en');
  let lastProgress = performance.now();
  const summary = await reindexSearch(createRunner(handle.client), {
    ...options,
    onBatch: (written, pending) => {
      if (performance.now() - lastProgress < 5000) return;
      lastProgress = performance.now();
      say(`reindex-search: ${count(written)} of ${count(pending)} messages indexed...`);
    },
  });
  const rate = summary.seconds > 0 ? Math.round(summary.written / summary.seconds) : 0;
  say(
    `reindex-search${summary.stopped ? ' (stopped; run it again to finish)' : ''}: ${count(summary.written)} messages indexed ` +
      `in ${summary.seconds.toFixed(1)} s (${count(rate)} messages/s)`,
  );
  return summary;
}

async function seed(args: string[]): Promise<void> {
  if (args[0] !== '--bench') fail(`seed takes --bench (the benchmark data set).\n${USAGE}`);
  const config = loadConfig();
  if (config.databaseUrl === null) fail('seed --bench loads into the PostgreSQL at DATABASE_URL; set it first.');
  // A maintenance command, like migrate: no statement timeout (its batches stay short, its vacuums may not).
  const handle = await open(config, 0);
  await applyMigrations(handle);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`seeding ${BENCH_DATA.totalMessages.toLocaleString('en')} messages in ${BENCH_DATA.conversations} conversations...`);
  // One batch per core: PostgreSQL, on the same machine here, does the work.
  const concurrency = Math.min(availableParallelism(), config.poolSize);
  const outcome = await seedBenchData(handle.db, BENCH_DATA, say, { concurrency });
  await handle.close();
  if (outcome.kind === 'not-empty') {
    fail(`seed --bench loads into an empty database, and this one has ${outcome.conversations.toLocaleString('en')} conversations; create a fresh one.`);
  }
  say(`seeded ${outcome.messages.toLocaleString('en')} messages, search vectors included, in ${outcome.seconds.toFixed(1)} s`);
}

async function token(args: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { ttl: { type: 'string' }, admin: { type: 'boolean' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  const [userId] = parsed.positionals;
  if (!userId || parsed.positionals.length > 1) fail(`token needs one user id.\n${USAGE}`);
  const ttl = parsed.values.ttl === undefined ? DEV_TOKEN_TTL_SECONDS : Number(parsed.values.ttl);
  if (!Number.isInteger(ttl) || ttl < 1) fail(`--ttl takes a whole number of seconds.\n${USAGE}`);
  const secret = secretOf(loadConfig());
  if (secret === null) fail('token signs with JWT_SECRET; this configuration has none (tokens come from JWT_JWKS_URL).');
  // --admin: the role claim that purgeMessages (anywhere), eraseUser and publishAnnouncement need.
  const claims = parsed.values.admin ? { roles: ['admin'] } : {};
  process.stdout.write(`${await signToken(secret, userId, ttl, claims)}\n`);
}

const [command = 'serve', ...rest] = process.argv.slice(2);
const help = async () => void process.stdout.write(`${USAGE}\n`);
const commands: Record<string, () => Promise<void>> = {
  serve: () => serve(rest),
  help,
  '--help': help,
  '-h': help,
  migrate,
  purge,
  archive: () => archive(rest),
  'reindex-search': () => reindex(rest),
  token: () => token(rest),
  seed: () => seed(rest),
};
const run = commands[command];
if (run === undefined) fail(`unknown command "${command}".\n${USAGE}`);
// Every command's failures end here: a failed statement prints as PostgreSQL's code and message, never drizzle's parameter dump.
run().catch((error: unknown) => {
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE') fail(`the port is already in use (${(error as Error).message}); set PORT to a free one.`);
  fail(`${command} failed: ${failureText(error)}`);
});
