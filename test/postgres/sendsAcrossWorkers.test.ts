/**
 * Sends with BACKSCROLL_WORKERS=2: a send to a busy conversation is stored
 * by the worker that owns it, whichever worker the request reached
 * (src/store/routedSends.ts, src/sendForwarding.ts). Each request here comes
 * on a connection of its own, so the primary hands them to both workers,
 * and they come at once, so the conversation is busy.
 *
 * The owner dying mid-send is made certain rather than hoped for: the test
 * holds the conversation's row lock, so the owner's send statement waits on
 * it with the forwarded sends queued behind, and only then kills the owner.
 */
import { request } from 'node:http';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { conversationUuid } from '../../src/graphql/resolvers/arguments.ts';
import { sendOwnerSlot } from '../../src/history/sendOwner.ts';
import { slotOf, workersOf } from '../helpers/clusterWorkers.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

const SECRET = 'sends-across-workers-secret-that-is-at-least-32-characters';
const WORKERS = 2;
const MEMBERS = ['alice', 'bob', 'carol', 'dave'];
const CREATE = `mutation ($m: [ID!]!) { createConversation(input: { memberIds: $m }) { conversation { id } } }`;
const SEND = `mutation ($c: ID!, $k: String!, $t: String!) {
  sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $t }) { message { seq } deduplicated } }`;
/** Sends at once into one conversation. */
const TOGETHER = 40;

interface Answer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
}

describe('Sends across BACKSCROLL_WORKERS=2', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let database: DatabaseHandle;
  let sql: postgres.Sql;
  let server: ServerProcess;
  let port: number;
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 1 });
    await applyMigrations(database);
    sql = postgres(scratch.url, { max: 2, onnotice: () => undefined });
    port = await freePort();
    server = await startServerProcess(
      { DATABASE_URL: scratch.url, JWT_SECRET: SECRET, NODE_ENV: 'production', LOG_LEVEL: 'silent', BACKSCROLL_WORKERS: String(WORKERS), DATABASE_POOL_SIZE: '4' },
      port,
      90_000,
    );
    for (const user of MEMBERS) tokens.set(user, await signToken(SECRET, user, 3600));
  }, 120_000);
  afterAll(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await sql?.end();
    await database?.close();
    await scratch?.drop();
  });

  /** One GraphQL request from `user`, over a connection of its own; rejects if the connection fails. */
  const post = (user: string, query: string, variables: Record<string, unknown>) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/graphql',
          agent: false,
          timeout: 60_000,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(user)}` },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer in 60 s')));
      req.on('error', reject);
      req.end(JSON.stringify({ query, variables }));
    });
  const createConversation = async () => {
    const answer = await post('alice', CREATE, { m: MEMBERS.slice(1) });
    return answer.body.data.createConversation.conversation.id as string;
  };
  const send = (user: string, id: string, key: string) => post(user, SEND, { c: id, k: key, t: `message ${key}` });
  /** The conversation's messages as stored: seq and client id, in seq order. */
  const stored = (id: string) =>
    sql<{ seq: number; key: string }[]>`select seq::int as seq, client_msg_id as key from messages where conv_id = ${conversationUuid(id)} order by seq`;
  /** A series' value in a scrape of every worker's metrics, once one answers (503 while a replacement worker starts). */
  const metric = async (series: string) => {
    let response = await fetch(`http://127.0.0.1:${port}/metrics`);
    for (let tries = 1; response.status === 503 && tries < 30; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      response = await fetch(`http://127.0.0.1:${port}/metrics`);
    }
    expect(response.status).toBe(200);
    const text = await response.text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };
  /** The worker storing sends to conversation `id`. */
  const ownerOf = (id: string) => {
    const workers = workersOf(server.child.pid!);
    expect(workers).toHaveLength(WORKERS);
    return workers.find((pid) => slotOf(pid) === sendOwnerSlot(conversationUuid(id), WORKERS))!;
  };

  it('stores sends to one conversation, reaching either worker, once each in one gapless order, forwarding those that reach the other', { timeout: 90_000 }, async () => {
    const forwardedBefore = await metric('backscroll_sends_forwarded_total{answer="answered"}');
    const id = await createConversation();
    const keys = Array.from({ length: TOGETHER }, (_, i) => `together-${i}`);
    const answers = await Promise.all(keys.map((key, i) => send(MEMBERS[i % MEMBERS.length]!, id, key)));
    for (const answer of answers) {
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data.sendMessage.deduplicated).toBe(false);
    }
    const rows = await stored(id);
    expect(rows.map((row) => row.seq)).toEqual(keys.map((_, i) => i + 1));
    expect(new Set(rows.map((row) => row.key))).toEqual(new Set(keys));
    // Each answer names the seq its message was stored at.
    const seqOf = new Map(rows.map((row) => [row.key, row.seq]));
    expect(answers.map((answer) => answer.body.data.sendMessage.message.seq)).toEqual(keys.map((key) => seqOf.get(key)));
    // Some reached the worker that does not own the conversation, and were stored by the owner.
    expect(await metric('backscroll_sends_forwarded_total{answer="answered"}')).toBeGreaterThan(forwardedBefore);
  });

  it('answers every send that reached the surviving worker when the owner dies holding them, and stores each once', { timeout: 120_000 }, async () => {
    const id = await createConversation();
    const owner = ownerOf(id);
    const keys = Array.from({ length: TOGETHER }, (_, i) => `dying-${i}`);
    // Settled as they come: those on the dying owner's own connections fail while the test is still waiting on others.
    const answers = new Map<string, Promise<PromiseSettledResult<Answer>>>();
    const locked = sql.reserve();
    const held = await locked;
    try {
      await held`begin`;
      await held`select 1 from conversations where id = ${conversationUuid(id)} for update`;
      for (const [i, key] of keys.entries()) answers.set(
          key,
          send(MEMBERS[i % MEMBERS.length]!, id, key).then(
            (value) => ({ status: 'fulfilled', value }),
            (reason: unknown) => ({ status: 'rejected', reason }),
          ),
        );
      // The owner's statement waits on the lock, the rest queue behind it, in the owner or forwarded to it.
      for (let waited = 0; ; waited += 100) {
        const [row] = await sql<{ waiting: number }[]>`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
        if (row!.waiting > 0) break;
        if (waited > 30_000) throw new Error('no send statement waited on the held lock');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.kill(owner, 'SIGKILL');
      // The survivor, told its forwarded sends were lost, stores them itself: they wait on the lock too.
      await server.waitForOutput(`worker ${owner} exited`);
    } finally {
      await held`commit`;
      held.release();
    }
    const settled = await Promise.all(answers.values());
    const reached = settled.filter((result) => result.status === 'fulfilled').map((result) => (result as PromiseFulfilledResult<Answer>).value);
    // Requests on the dead owner's own connections fail with it; every one that reached the survivor is answered, none with an error.
    expect(reached.length).toBeGreaterThan(0);
    for (const answer of reached) expect(answer.body.errors).toBeUndefined();
    expect(await metric('backscroll_sends_forwarded_total{answer="lost"}')).toBeGreaterThan(0);
    // A client retries what failed with the same clientMsgId (the new owner is up by now).
    for (const [i, key] of keys.entries()) {
      const first = settled[i]!;
      if (first.status === 'fulfilled') continue;
      const retry = await send(MEMBERS[i % MEMBERS.length]!, id, key);
      expect(retry.body.errors).toBeUndefined();
    }
    const rows = await stored(id);
    expect(rows.map((row) => row.seq)).toEqual(keys.map((_, i) => i + 1));
    expect(new Set(rows.map((row) => row.key))).toEqual(new Set(keys));
  });
});
