/**
 * `backscroll archive` as an operator runs it, in a child process with only
 * the settings each test gives it: on PGlite (a data folder, the default
 * folder store) and on PostgreSQL, and against S3 (s3rver); `--verify`;
 * and the server archiving on its own schedule and serving what it moved.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { SETTINGS } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createRunner } from '../../src/db/runner.ts';
import { conversationGlobalId } from '../../src/history/globalId.ts';
import { createGroupInSql, seedAgedMessages, textOf } from '../helpers/archive.ts';
import { type Backend, backends, createScratchDatabase } from '../helpers/database.ts';
import { type LocalS3, startLocalS3 } from '../helpers/localS3.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'archive-cli-test-secret-of-32-characters!';
/** Safety net for one process to print what we wait for, or to exit. */
const PROCESS_LIMIT_MS = 60_000;
/** A test runs several processes, each opening (and on PGlite migrating) its database: seconds each on a busy 2-core box. */
const TEST_LIMIT_MS = 180_000;
const CONV = '5ca1ab1e-0000-4000-8000-00000000a001';

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();
const cleanups: (() => Promise<void>)[] = [];
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The parent environment without any setting, plus `settings`. */
function environment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const { name } of SETTINGS) delete env[name];
  return { ...env, LOG_LEVEL: 'silent', JWT_SECRET: SECRET, ...settings };
}

function spawnCli(args: string[], settings: Record<string, string>) {
  const child = spawn(process.execPath, ['bin/backscroll.js', ...args], { cwd: ROOT, env: environment(settings), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  const closed = new Promise<Finished>((resolve) => child.once('close', (code) => resolve({ code, ...output })));
  return { child, output, closed };
}

/** Runs `backscroll ...args` to its end. */
async function runCli(args: string[], settings: Record<string, string>): Promise<Finished> {
  const { child, closed } = spawnCli(args, settings);
  const timer = setTimeout(() => child.kill('SIGKILL'), PROCESS_LIMIT_MS);
  try {
    return await closed;
  } finally {
    clearTimeout(timer);
    running.delete(child);
  }
}

async function temporaryFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'backscroll-archive-cli-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/**
 * A database for `backend` holding one group (alice, bob) of `count`
 * messages 30 days old; answers the settings that name it.
 */
async function seededDatabase(backend: Backend, count: number): Promise<Record<string, string>> {
  const dataDir = await temporaryFolder();
  let settings: Record<string, string> = { BACKSCROLL_DATA_DIR: dataDir };
  let handle;
  if (backend === 'pglite') {
    handle = await openDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pglite') });
  } else {
    const scratch = await createScratchDatabase();
    cleanups.push(scratch.drop);
    settings = { ...settings, DATABASE_URL: scratch.url };
    handle = await openDatabase({ kind: 'postgres', url: scratch.url });
  }
  await applyMigrations(handle);
  const db = createRunner(handle.client);
  await createGroupInSql(db, CONV, 'alice', ['bob']);
  await seedAgedMessages(db, CONV, 'alice', count, 30);
  await handle.close();
  return settings;
}

/** The segment files under `folder`, as keys. */
async function segmentFiles(folder: string): Promise<string[]> {
  if (!existsSync(folder)) return [];
  const entries = await readdir(folder, { recursive: true });
  return entries.filter((name) => name.endsWith('.seg')).sort();
}

describe.each(backends)('backscroll archive (%s)', { timeout: TEST_LIMIT_MS }, (backend) => {
  it('archives all but the newest --keep-newest, says so, then finds nothing to do, and --verify passes', async () => {
    const settings = await seededDatabase(backend, 1300);
    const first = await runCli(['archive', '--older-than', '0s', '--keep-newest', '100'], settings);
    const archiveDir = join(settings.BACKSCROLL_DATA_DIR!, 'archive');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`archive: the bodies of messages older than 0s, except each conversation's newest 100, into folder ${archiveDir}\n`);
    expect(first.stdout).toContain(`archived 1,200 messages of conversation ${CONV} in 2 segments\n`);
    expect(first.stdout).toMatch(/archive: 1,200 messages from 1 conversations in 2 segments \([\d,]+ bytes\) in [\d.]+ s/);
    expect(await segmentFiles(archiveDir)).toEqual([expect.stringMatching(new RegExp(`^${CONV}/1-1000-[0-9a-f]{16}\\.seg$`)), expect.stringMatching(/\/1001-1200-/)]);

    const again = await runCli(['archive', '--older-than', '0s', '--keep-newest', '100'], settings);
    expect([again.code, again.stdout.split('\n').at(-2)]).toEqual([0, 'archive: nothing to archive']);

    const verified = await runCli(['archive', '--verify'], settings);
    expect([verified.code, verified.stdout]).toEqual([
      0,
      `archive --verify: checking every recorded segment in folder ${archiveDir}...\narchive --verify: all 2 segments are present and whole\n`,
    ]);

    const [firstFile] = await segmentFiles(archiveDir);
    const bytes = await readFile(join(archiveDir, firstFile!));
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
    await writeFile(join(archiveDir, firstFile!), bytes);
    const failed = await runCli(['archive', '--verify'], settings);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`bad segment ${firstFile} (conversation ${CONV}, seqs 1 to 1000): its checksum does not match its content\n`);
    expect(failed.stdout).toContain('archive --verify: 1 of 2 segments failed\n');
  });

  it('says which segments a run rewrote or deleted because their messages were revoked or purged since, archiving switched off or not', async () => {
    const settings = await seededDatabase(backend, 300);
    expect((await runCli(['archive', '--older-than', '0s', '--keep-newest', '0'], settings)).code).toBe(0);
    const change = async (statement: string) => {
      const handle = await openDatabase(settings.DATABASE_URL ? { kind: 'postgres', url: settings.DATABASE_URL } : { kind: 'pglite', dataDir: join(settings.BACKSCROLL_DATA_DIR!, 'pglite') });
      await createRunner(handle.client).rows(sql.raw(statement));
      await handle.close();
    };
    const [segment] = await segmentFiles(join(settings.BACKSCROLL_DATA_DIR!, 'archive'));
    const key = segment!.replace(/\.seg$/, '');

    await change(`update messages set revoked_at = now(), revoked_by = 'alice' where conv_id = '${CONV}' and seq = 7`);
    const rewritten = await runCli(['archive', '--older-than', '0s', '--keep-newest', '0'], settings);
    expect(rewritten.code, rewritten.stderr).toBe(0);
    expect(rewritten.stdout).toMatch(new RegExp(`rewrote segment ${key}(\\.seg)? with its 299 readable messages of 300 \\(seqs 1 to 300\\)\n`));

    // Archiving switched off (no ARCHIVE_AFTER_DAYS, no --older-than) still brings old segments in line.
    await change(`delete from messages where conv_id = '${CONV}'`);
    const dropped = await runCli(['archive'], settings);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toMatch(/deleted segment \S+: none of its messages is readable any more/);
    expect(dropped.stdout).toContain('archive: archiving is off (ARCHIVE_AFTER_DAYS is not set); nothing new archived; segments from before were brought in line');
    expect(await segmentFiles(join(settings.BACKSCROLL_DATA_DIR!, 'archive'))).toEqual([]);
  });

  it('does nothing, and says why, when ARCHIVE_AFTER_DAYS is unset and no --older-than is given', async () => {
    const settings = await seededDatabase(backend, 10);
    const off = await runCli(['archive'], settings);
    expect([off.code, off.stdout]).toEqual([
      0,
      'archive: archiving is off (ARCHIVE_AFTER_DAYS is not set); nothing to do. Pass --older-than <duration>, like 90d, to archive once.\n',
    ]);
    const young = await runCli(['archive'], { ...settings, ARCHIVE_AFTER_DAYS: '60', ARCHIVE_KEEP_NEWEST: '0' });
    expect(young.code).toBe(0);
    expect(young.stdout).toContain("archive: the bodies of messages older than 60 days, except each conversation's newest 0, into folder");
    expect(young.stdout).toContain('archive: nothing to archive\n');
    expect(await segmentFiles(join(settings.BACKSCROLL_DATA_DIR!, 'archive'))).toEqual([]);
  });
});

describe('backscroll archive: bad arguments', { timeout: TEST_LIMIT_MS }, () => {
  it.each([
    [['archive', '--older-than', '90'], '--older-than takes a whole number and a unit, s, m, h or d, of at most 36500d (like 0s or 90d), got "90".'],
    [['archive', '--keep-newest', 'many'], '--keep-newest takes a whole number of messages from 0 to 999999999, got "many".'],
    [['archive', '--verify', '--older-than', '1d'], 'archive --verify takes no other option.'],
    [['archive', '--soon'], "Unknown option '--soon'"],
  ])('refuses %j, saying what it takes', async (args, message) => {
    const dataDir = await temporaryFolder();
    const result = await runCli(args, { BACKSCROLL_DATA_DIR: dataDir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
  });
});

describe('backscroll archive with ARCHIVE_S3_BUCKET (s3rver)', { timeout: TEST_LIMIT_MS }, () => {
  let s3: LocalS3;
  afterAll(() => s3?.close());

  it('archives into the bucket, and --verify reads every segment back from it', async () => {
    s3 = await startLocalS3();
    const bucket = await s3.bucket('cold');
    const settings = { ...(await seededDatabase('pglite', 400)), ...s3.env(bucket) };
    const archived = await runCli(['archive', '--older-than', '0s', '--keep-newest', '0'], settings);
    expect(archived.code, archived.stderr).toBe(0);
    expect(archived.stdout).toContain(`into s3://cold at ${bucket.endpoint}\n`);
    expect(archived.stdout).toContain(`archived 400 messages of conversation ${CONV} in 1 segments\n`);
    const verified = await runCli(['archive', '--verify'], settings);
    expect([verified.code, verified.stdout.split('\n').at(-2)]).toEqual([0, 'archive --verify: all 1 segments are present and whole']);
  });
});

describe('ARCHIVE_INTERVAL_SECONDS', { timeout: TEST_LIMIT_MS }, () => {
  it('archives inside the server, which serves the archived messages as before', async () => {
    const settings: Record<string, string> = {
      ...(await seededDatabase('pglite', 300)),
      PORT: '0',
      ARCHIVE_AFTER_DAYS: '7',
      ARCHIVE_KEEP_NEWEST: '50',
      ARCHIVE_INTERVAL_SECONDS: '3600',
      LOG_LEVEL: 'info',
    };
    const server = spawnCli(['serve', '--no-demo'], settings);
    const finished = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no archive pass finished:\n${server.output.stdout}\n${server.output.stderr}`)), PROCESS_LIMIT_MS);
      server.child.stdout.on('data', () => {
        if (!server.output.stdout.includes('"msg":"archive finished"') || !/serving (http:\/\/\S+)/.test(server.output.stdout)) return;
        clearTimeout(timer);
        resolve();
      });
    });
    await finished;
    const url = /serving (http:\/\/\S+)/.exec(server.output.stdout)![1]!;
    expect(await segmentFiles(join(settings.BACKSCROLL_DATA_DIR!, 'archive'))).toEqual([expect.stringMatching(/\/1-250-[0-9a-f]{16}\.seg$/)]);
    const token = await signToken(SECRET, 'bob', 600);
    const page = async (variables: Record<string, unknown>) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          query: `query($id: ID!, $first: Int, $after: String) { conversation(id: $id) { messages(first: $first, after: $after) {
            edges { node { seq content { ... on TextContent { text } } } } pageInfo { hasNextPage endCursor } } } }`,
          variables,
        }),
      });
      return (await response.json()) as { data: { conversation: { messages: { edges: { node: { seq: number; content: { text: string } } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } } } };
    };
    const seen: { seq: number; text: string }[] = [];
    let after: string | undefined;
    for (;;) {
      const { data } = await page({ id: conversationGlobalId(CONV), first: 100, after });
      seen.push(...data.conversation.messages.edges.map((e) => ({ seq: e.node.seq, text: e.node.content.text })));
      if (!data.conversation.messages.pageInfo.hasNextPage) break;
      after = data.conversation.messages.pageInfo.endCursor;
    }
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => ({ seq: i + 1, text: textOf(i + 1) })));
    server.child.kill('SIGTERM');
    expect((await server.closed).code).toBe(0);
  });
});
