/**
 * Two server processes on one PostgreSQL database: a subscriber connected to
 * one receives what is sent through the other, because every process
 * LISTENs on the same channel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { type LiveClient, liveClient, untilLive } from '../helpers/liveClient.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

const SECRET = 'two-process-secret-that-is-at-least-32-characters';
const EVENTS = `subscription ($id: ID!) {
  conversationEvents(conversationId: $id) { kind seq message { sender { id } content { ... on TextContent { text } } } }
}`;
const CREATE = `mutation { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }`;
const SEND = `mutation ($c: ID!, $k: String!, $t: String!) {
  sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $t }) { message { seq } } }`;

describe('Live events across server processes', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let database: DatabaseHandle;
  const servers: ServerProcess[] = [];
  let socket: LiveClient | null = null;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 2 });
    await applyMigrations(database);
    const env = { DATABASE_URL: scratch.url, JWT_SECRET: SECRET, NODE_ENV: 'production', LOG_LEVEL: 'silent' };
    servers.push(await startServerProcess(env, await freePort()), await startServerProcess(env, await freePort()));
  }, 120_000);
  afterAll(async () => {
    await socket?.dispose();
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await database?.close();
    await scratch?.drop();
  });

  it('delivers a send made through one process to a subscriber connected to the other', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const gql = async (url: string, user: string, query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await signToken(SECRET, user, 3600)}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as { data?: any; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const id = (await gql(b.url, 'alice', CREATE)).createConversation.conversation.id as string;
    let n = 0;
    const sendThroughB = async (text: string) => (await gql(b.url, 'alice', SEND, { c: id, k: `k${n++}`, t: text })).sendMessage.message.seq as number;

    socket = liveClient(a.url, { authorization: `Bearer ${await signToken(SECRET, 'bob', 3600)}` });
    const events = socket.subscribe(EVENTS, { id });
    await untilLive(events, () => sendThroughB('poke'));
    const seq = await sendThroughB('hello from the other process');
    expect(await events.next()).toEqual({
      data: { conversationEvents: { kind: 'MESSAGE_SENT', seq, message: { sender: { id: 'alice' }, content: { text: 'hello from the other process' } } } },
    });
  });
});
