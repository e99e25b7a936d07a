/**
 * Kill the server with SIGKILL in the middle of 5,000 sends, restart it, let
 * the clients retry: every acknowledged send is stored with the seq it was
 * acknowledged with, nothing is stored twice, and seqs stay dense.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { rowsOf } from '../../src/db/rows.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

const SECRET = 'crash-test-secret-that-is-at-least-32-characters';
const SENDS = 5000;
const CONCURRENCY = 20;
const KILL_AFTER_ACKS = 1500;


describe('A server killed mid-send loses nothing acknowledged', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let database: DatabaseHandle;
  let server: ServerProcess | null = null;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 2 });
    await applyMigrations(database);
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await database.close();
    await scratch.drop();
  });

  it('keeps every acknowledged send, stores none twice after retries, and keeps seqs dense', { timeout: 180_000 }, async () => {
    const env = {
      DATABASE_URL: scratch.url,
      JWT_SECRET: SECRET,
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_SEND_PER_SECOND: '100000',
      RATE_LIMIT_SEND_BURST: '100000',
    };
    const port = await freePort();
    server = await startServerProcess(env, port);
    const token = await signToken(SECRET, 'alice', 3600);
    const gql = async (url: string, query: string, variables: Record<string, unknown>) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: any; errors?: unknown[] };
    };
    const created = await gql(server.url, 'mutation { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }', {});
    const conversationId = created.data.createConversation.conversation.id as string;
    const SEND = `mutation ($c: ID!, $k: String!, $t: String!) {
      sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $t }) { deduplicated message { seq } } }`;

    const acknowledged = new Map<number, number>();
    const send = async (url: string, i: number) => {
      const result = await gql(url, SEND, { c: conversationId, k: `send-${i}`, t: `text ${i}` });
      if (result.errors || !result.data) throw new Error(JSON.stringify(result.errors));
      return result.data.sendMessage.message.seq as number;
    };

    // Phase 1: send until KILL_AFTER_ACKS are acknowledged, then SIGKILL with requests in flight.
    let next = 0;
    const failed: number[] = [];
    let killed = false;
    const firstServer = server;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SENDS) {
          const i = next++;
          try {
            acknowledged.set(i, await send(firstServer.url, i));
          } catch {
            failed.push(i);
          }
          if (!killed && acknowledged.size >= KILL_AFTER_ACKS) {
            killed = true;
            firstServer.child.kill('SIGKILL');
          }
        }
      }),
    );
    expect(await firstServer.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(failed.length).toBeGreaterThan(0);

    // Phase 2: restart and retry everything not acknowledged, plus some that were.
    server = await startServerProcess(env, port);
    const restarted = server;
    const retries = [...failed, ...[...acknowledged.keys()].slice(0, 50)];
    const retried = new Map<number, number>();
    let cursor = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (cursor < retries.length) {
          const i = retries[cursor++]!;
          retried.set(i, await send(restarted.url, i));
        }
      }),
    );
    const lost = [...acknowledged].filter(([i, seq]) => retried.has(i) && retried.get(i) !== seq);
    expect(lost).toEqual([]);

    // The database: one row per client id, acknowledged seqs as acknowledged, dense from 1.
    const stored = rowsOf<{ client_msg_id: string; seq: number }>(
      await database.db.execute(sql`select client_msg_id, seq from messages order by seq`),
    );
    const seqByClientId = new Map(stored.map((r) => [r.client_msg_id, r.seq]));
    expect(stored.length).toBe(SENDS);
    expect(seqByClientId.size).toBe(SENDS);
    expect(stored.map((r) => r.seq)).toEqual(Array.from({ length: SENDS }, (_, k) => k + 1));
    const mismatched = [...acknowledged].filter(([i, seq]) => seqByClientId.get(`send-${i}`) !== seq);
    expect(mismatched).toEqual([]);
    const [conversation] = rowsOf<{ max_seq: number }>(await database.db.execute(sql`select max_seq from conversations`));
    expect(conversation!.max_seq).toBe(SENDS);
    console.log(
      `crash: 0 of ${acknowledged.size} acknowledged sends lost; ${failed.length} unacknowledged at the kill, retried and stored once; seqs dense 1..${SENDS}`,
    );
  });
});
