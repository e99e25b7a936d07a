/**
 * The retention purge: what it deletes (index rows, bodies, hidden ranges
 * wholly at or below the cut-off, nothing above), that it can be stopped and run again,
 * that sends go on while it runs, that it bounds the change feed, and
 * `backscroll purge` as an operator runs it. The schedule that runs it in the
 * server is tested on a fake clock in test/unit/purgeSchedule.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { KEEP_EVERYTHING, MS_PER_DAY, type RetentionPolicy } from '../../src/history/retention.ts';
import { runPurgePass } from '../../src/purge.ts';
import { type ConversationPurge, purgeExpired } from '../../src/store/purge.ts';
import { backends, postgresOnly } from '../helpers/database.ts';
import { appendHistory, setOwnPolicy } from '../helpers/history.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, send } from '../helpers/operations.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The instant every purge here judges retention at; histories are written before it. */
const NOW = new Date();
const daysAgo = (days: number, plusMs = 0) => new Date(NOW.getTime() - days * MS_PER_DAY + plusMs);
const clock = (server: RetentionPolicy = KEEP_EVERYTHING) => ({ server, now: NOW });

/** Consecutive seqs from `from` to `to`, both included. */
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** `userId` has deleted the seqs of `convId` in `ranges` (`[from, to]`, both included) for themselves. */
async function hide(db: SqlRunner, convId: string, userId: string, ranges: [number, number][]): Promise<void> {
  await db.rows(sql`insert into message_hide_ranges (conv_id, user_id, from_seq, to_seq)
    select ${convId}, ${userId}, r.from_seq, r.to_seq
    from unnest(${sql.param(ranges.map((r) => r[0]))}::int8[], ${sql.param(ranges.map((r) => r[1]))}::int8[]) as r(from_seq, to_seq)`);
}

/** What is stored of conversation `convId`: index rows' and bodies' seqs, and hidden ranges (`user:from-to`), ascending. */
async function stored(db: SqlRunner, convId: string): Promise<{ messages: number[]; bodies: number[]; hides: string[] }> {
  const [row] = await db.rows<{ messages: number[]; bodies: number[]; hides: string[] }>(sql`select
      (select coalesce(json_agg(seq order by seq), '[]') from messages where conv_id = ${convId}) as messages,
      (select coalesce(json_agg(seq order by seq), '[]') from message_bodies where conv_id = ${convId}) as bodies,
      (select coalesce(json_agg(user_id || ':' || from_seq || '-' || to_seq order by from_seq, user_id), '[]')
        from message_hide_ranges where conv_id = ${convId}) as hides`);
  return row!;
}

/** Everything `purgeExpired` reported, in order. */
function recorder() {
  const conversations: ConversationPurge[] = [];
  const batches: number[] = [];
  return {
    conversations,
    batches,
    onConversation: (report: ConversationPurge) => conversations.push(report),
    onBatch: (deletedSoFar: number) => batches.push(deletedSoFar),
  };
}

describe.each(backends)('The retention purge (%s)', (backend) => {
  const itOnPostgres = postgresOnly(backend);
  let harness: Harness;
  let alice: Client;
  let db: SqlRunner;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    db = createRunner(harness.database.client);
  });
  afterAll(() => harness.close());

  /**
   * A fresh group of alice and bob under `policy`. A pass covers every
   * conversation, so each test leaves its own fully purged: the totals the
   * next test compares are its own.
   */
  const group = async (policy: RetentionPolicy) => {
    const { id, uuid } = await createGroup(alice, ['bob']);
    await setOwnPolicy(db, uuid, policy);
    return { id, uuid };
  };

  it('deletes messages older than `days` with their bodies and hides, and keeps the one created exactly at the cut-off', async () => {
    const { uuid } = await group({ days: 10, maxMessages: null });
    await appendHistory(db, uuid, [daysAgo(12), daysAgo(11), daysAgo(10, -1), daysAgo(10), daysAgo(1)]);
    await hide(db, uuid, 'bob', [
      [2, 2],
      [4, 5],
    ]);
    const seen = recorder();

    expect(await purgeExpired(db, clock(), { batchSize: 100, ...seen })).toEqual({ conversations: 1, messages: 3, hides: 1 });

    expect(await stored(db, uuid)).toEqual({ messages: [4, 5], bodies: [4, 5], hides: ['bob:4-5'] });
    expect(seen.conversations).toEqual([{ convId: uuid, messages: 3, hides: 1, throughSeq: 3 }]);
  });

  it('deletes the seqs past `maxMessages` and keeps the newest `maxMessages`, and a hidden range reaching past the cut-off whole', async () => {
    const { uuid } = await group({ days: null, maxMessages: 3 });
    await appendHistory(db, uuid, range(1, 10).map(() => daysAgo(1)));
    await hide(db, uuid, 'bob', [
      [5, 5],
      [7, 8],
    ]);

    expect(await purgeExpired(db, clock(), { batchSize: 100 })).toEqual({ conversations: 1, messages: 7, hides: 1 });
    expect(await stored(db, uuid)).toEqual({ messages: [8, 9, 10], bodies: [8, 9, 10], hides: ['bob:7-8'] });
  });

  it("applies the server's limits to a conversation without its own, and leaves one under no limit untouched", async () => {
    const underServer = await group(KEEP_EVERYTHING);
    await appendHistory(db, underServer.uuid, [daysAgo(400), daysAgo(300), daysAgo(2)]);

    expect(await purgeExpired(db, clock(), { batchSize: 100 })).toEqual({ conversations: 0, messages: 0, hides: 0 });
    expect((await stored(db, underServer.uuid)).messages).toEqual([1, 2, 3]);

    expect(await purgeExpired(db, clock({ days: 365, maxMessages: null }), { batchSize: 100 })).toEqual({
      conversations: 1,
      messages: 1,
      hides: 0,
    });
    expect((await stored(db, underServer.uuid)).messages).toEqual([2, 3]);
  });

  it('deletes nothing when run a second time', async () => {
    const { uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, [daysAgo(9), daysAgo(8), daysAgo(7), daysAgo(1)]);
    await hide(db, uuid, 'bob', [
      [1, 1],
      [4, 4],
    ]);
    await purgeExpired(db, clock(), { batchSize: 2 });
    const after = await stored(db, uuid);
    const seen = recorder();

    expect(await purgeExpired(db, clock(), { batchSize: 2, ...seen })).toEqual({ conversations: 0, messages: 0, hides: 0 });
    expect(seen).toMatchObject({ conversations: [], batches: [] });
    expect(await stored(db, uuid)).toEqual(after);
    expect(after).toEqual({ messages: [4], bodies: [4], hides: ['bob:4-4'] });
  });

  it('deletes in transactions of `batchSize` messages, lowest seqs first', async () => {
    const { uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, [...range(1, 12).map(() => daysAgo(30)), daysAgo(1)]);
    const seen = recorder();

    await purgeExpired(db, clock(), { batchSize: 5, ...seen });

    expect(seen.batches).toEqual([5, 10, 12]);
    expect(seen.conversations).toEqual([{ convId: uuid, messages: 12, hides: 0, throughSeq: 12 }]);
  });

  it('finishes, when run again, a pass that stopped after its first batch', async () => {
    const { uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, [...range(1, 25).map(() => daysAgo(30)), daysAgo(1)]);
    await hide(db, uuid, 'bob', [
      [5, 5],
      [20, 20],
      [26, 26],
    ]);
    const crash = () => {
      throw new Error('the purge process died');
    };

    await expect(purgeExpired(db, clock(), { batchSize: 5, onBatch: crash })).rejects.toThrow('the purge process died');
    // The first batch committed whole: seqs 1-5 and the hide of 5, nothing of the rest.
    expect(await stored(db, uuid)).toEqual({ messages: range(6, 26), bodies: range(6, 26), hides: ['bob:20-20', 'bob:26-26'] });

    expect(await purgeExpired(db, clock(), { batchSize: 5 })).toEqual({ conversations: 1, messages: 20, hides: 1 });
    expect(await stored(db, uuid)).toEqual({ messages: [26], bodies: [26], hides: ['bob:26-26'] });
  });

  it('stops before its next batch when its signal is aborted, and the next pass carries on', async () => {
    const { uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, range(1, 10).map(() => daysAgo(30)));
    const stopping = new AbortController();

    const first = await purgeExpired(db, clock(), { batchSize: 4, signal: stopping.signal, onBatch: () => stopping.abort() });

    expect(first).toEqual({ conversations: 1, messages: 4, hides: 0 });
    expect((await stored(db, uuid)).messages).toEqual(range(5, 10));
    expect(await purgeExpired(db, clock(), { batchSize: 4 })).toEqual({ conversations: 1, messages: 6, hides: 0 });
  });

  it('removes hidden ranges left at or below the cut-off without their messages', async () => {
    const { uuid } = await group({ days: null, maxMessages: 1 });
    await appendHistory(db, uuid, range(1, 3).map(() => daysAgo(1)));
    await purgeExpired(db, clock(), { batchSize: 100 });
    // As if these hides had committed while the batch deleting their messages ran.
    await hide(db, uuid, 'bob', [
      [1, 2],
      [3, 3],
    ]);

    expect(await purgeExpired(db, clock(), { batchSize: 100 })).toEqual({ conversations: 1, messages: 0, hides: 1 });
    expect(await stored(db, uuid)).toEqual({ messages: [3], bodies: [3], hides: ['bob:3-3'] });
  });

  it('never blocks a send: sends during a purge all succeed and their seqs stay dense', async () => {
    const { id, uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, range(1, 200).map(() => daysAgo(30)));

    const [purged, sent] = await Promise.all([
      purgeExpired(db, clock(), { batchSize: 2 }),
      (async () => {
        const seqs: number[] = [];
        for (let i = 0; i < 20; i++) seqs.push(...(await Promise.all([send(alice, id, `a${i}`), send(alice, id, `b${i}`)])).map((m) => m.seq));
        return seqs;
      })(),
    ]);

    expect(purged.messages).toBe(200);
    expect([...sent].sort((a, b) => a - b)).toEqual(range(201, 240));
    expect(await stored(db, uuid)).toEqual({ messages: range(201, 240), bodies: range(201, 240), hides: [] });
  });

  // PostgreSQL only (PGlite is one in-process connection); not registered on PGlite.
    itOnPostgres('lets a send into the conversation commit while a purge batch is still open', async () => {
    const { id, uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, range(1, 3).map(() => daysAgo(30)));
    const sentDuringBatch: number[] = [];
    // Each batch, before it commits, waits for a send through the server: were
    // the batch to lock the conversation row (as sends do), this would hang.
    const holding: SqlRunner = {
      rows: (query) => db.rows(query),
      transaction: (work) =>
        db.transaction(async (tx) => {
          const result = await work(tx);
          sentDuringBatch.push((await send(alice, id, `during batch ${sentDuringBatch.length}`)).seq);
          return result;
        }),
    };

    expect(await purgeExpired(holding, clock(), { batchSize: 2 })).toEqual({ conversations: 1, messages: 3, hides: 0 });
    expect(sentDuringBatch).toEqual([4, 5]);
  });

  it('prunes change-feed entries older than the window, raises the pruned mark, and logs a line per conversation', async () => {
    const { uuid } = await group({ days: 5, maxMessages: null });
    await appendHistory(db, uuid, [daysAgo(30), daysAgo(1)]);
    await db.rows(sql`insert into conversation_changes (conv_id, change_seq, kind, from_seq, to_seq, created_at)
      select ${uuid}, s, 'revoked', 1, 1, ${daysAgo(40).toISOString()}::timestamptz + s * interval '1 second' from generate_series(1, 3) s`);
    await db.rows(sql`insert into conversation_changes (conv_id, change_seq, kind, from_seq, to_seq, created_at)
      values (${uuid}, 4, 'revoked', 2, 2, ${daysAgo(2).toISOString()}::timestamptz)`);
    await db.rows(sql`update conversations set change_seq = 4 where id = ${uuid}`);
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );

    const summary = await runPurgePass(db, { retention: KEEP_EVERYTHING, changeFeedDays: 30 }, logger, { now: NOW });

    expect(summary).toMatchObject({ conversations: 1, messages: 1, hides: 0, changesPruned: 3, stopped: false });
    const [feed] = await db.rows<{ pruned: number; left: number[] }>(sql`select c.changes_pruned_through as pruned,
        (select json_agg(change_seq order by change_seq) from conversation_changes where conv_id = c.id) as left
      from conversations c where c.id = ${uuid}`);
    expect(feed).toEqual({ pruned: 3, left: [4] });
    expect(lines.map(({ msg, conversation, messages, throughSeq, changesPruned }) => ({ msg, conversation, messages, throughSeq, changesPruned }))).toEqual([
      { msg: 'purged expired messages', conversation: uuid, messages: 1, throughSeq: 1, changesPruned: undefined },
      { msg: 'purge finished', conversation: undefined, messages: 1, throughSeq: undefined, changesPruned: 3 },
    ]);
  });
});

describe('The purge from the command line', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  /**
   * Runs `node bin/backscroll.js ...args` with only `settings` of the configuration
   * set; sends SIGTERM once stdout matches `stopWhen`, if given.
   */
  const runCommand = (args: string[], settings: Record<string, string>, stopWhen?: RegExp) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(DATABASE_URL|RETENTION_|CHANGE_FEED_|PURGE_|BACKSCROLL_|LOG_LEVEL|PORT$)/.test(name)),
      );
      const child = spawn(process.execPath, ['bin/backscroll.js', ...args], { cwd: ROOT, env: { ...env, ...settings }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let stopping = false;
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        // Once: a second SIGTERM would find the handler gone and kill the process.
        if (stopping || !stopWhen?.test(stdout)) return;
        stopping = true;
        child.kill('SIGTERM');
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      // A safety net against a hung process, never an assertion.
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });

  /** A PGlite data folder holding conversation `convId` with messages created 30 days ago, 20 days ago and now. */
  const dataFolder = async (convId: string) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'backscroll-purge-'));
    dirs.push(dataDir);
    const handle = await openDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pglite') });
    try {
      await applyMigrations(handle);
      const setup = createRunner(handle.client);
      await setup.rows(sql`insert into conversations (id, kind, title) values (${convId}, 'group', 'old')`);
      await appendHistory(setup, convId, [new Date(Date.now() - 30 * MS_PER_DAY), new Date(Date.now() - 20 * MS_PER_DAY), new Date()]);
    } finally {
      await handle.close();
    }
    return dataDir;
  };

  /** What is stored of `convId` in the folder, read with the folder opened here (and still open while `whileOpen` runs). */
  const storedIn = async (dataDir: string, convId: string, whileOpen: () => Promise<void> = async () => {}) => {
    const handle = await openDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pglite') });
    try {
      const result = await stored(createRunner(handle.client), convId);
      await whileOpen();
      return result;
    } finally {
      await handle.close();
    }
  };

  it('`backscroll purge` purges a PGlite folder under RETENTION_DAYS, printing each conversation and a summary, and exits 0', { timeout: 120_000 }, async () => {
    const convId = '00000000-0000-4000-8000-00000000abcd';
    const dataDir = await dataFolder(convId);

    const result = await runCommand(['purge'], { BACKSCROLL_DATA_DIR: dataDir, RETENTION_DAYS: '7' });

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`purged 2 messages from conversation ${convId} (through seq 2)`);
    expect(result.stdout).toMatch(/\npurge: 2 messages from 1 conversations in [\d.]+ s \([\d,]+ messages\/s\); 0 change-feed entries pruned\n$/);
    expect(await storedIn(dataDir, convId)).toEqual({ messages: [3], bodies: [3], hides: [] });
  });

  it('`backscroll purge` refuses a PGlite folder another process has open, naming PURGE_INTERVAL_SECONDS', { timeout: 120_000 }, async () => {
    const convId = '00000000-0000-4000-8000-00000000abce';
    const dataDir = await dataFolder(convId);
    let refused!: { code: number | null; stdout: string; stderr: string };

    // Two PGlite processes writing one folder corrupt it.
    const untouched = await storedIn(dataDir, convId, async () => {
      refused = await runCommand(['purge'], { BACKSCROLL_DATA_DIR: dataDir, RETENTION_DAYS: '7' });
    });

    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('PURGE_INTERVAL_SECONDS');
    expect(untouched.messages).toEqual([1, 2, 3]);
  });

  it('`backscroll serve` with PURGE_INTERVAL_SECONDS purges when it starts, logs it, and still shuts down cleanly', { timeout: 120_000 }, async () => {
    const convId = '00000000-0000-4000-8000-00000000abcf';
    const dataDir = await dataFolder(convId);

    const result = await runCommand(
      ['serve'],
      { BACKSCROLL_DATA_DIR: dataDir, RETENTION_DAYS: '7', PURGE_INTERVAL_SECONDS: '3600', PORT: '0' },
      /"msg":"purge finished"/,
    );

    expect(result.code).toBe(0);
    const logged = result.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(logged.filter((line) => line.msg === 'purged expired messages')).toMatchObject([{ conversation: convId, messages: 2, throughSeq: 2 }]);
    expect(logged.filter((line) => line.msg === 'purge finished')).toMatchObject([{ conversations: 1, messages: 2 }]);
    expect(await storedIn(dataDir, convId)).toEqual({ messages: [3], bodies: [3], hides: [] });
  });
});
