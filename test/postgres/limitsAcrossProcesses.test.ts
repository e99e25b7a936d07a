/**
 * Per-user limits hold across server processes: two servers on one
 * PostgreSQL share their rate-limit counters and the sockets-per-user count,
 * so a user cannot multiply a limit by spreading requests over processes (or
 * over the servers behind a load balancer).
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signToken } from '../../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { webSocketUrl } from '../helpers/liveClient.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

const SECRET = 'limits-across-processes-secret-of-32-characters';
const BURST = 10;

describe('Limits across two server processes on one PostgreSQL', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let database: DatabaseHandle;
  const servers: ServerProcess[] = [];
  let token: string;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 1 });
    await applyMigrations(database);
    const env = {
      DATABASE_URL: scratch.url,
      JWT_SECRET: SECRET,
      LOG_LEVEL: 'silent',
      BACKSCROLL_LANDING_PAGE: 'false',
      RATE_LIMIT_SEND_PER_SECOND: '1',
      RATE_LIMIT_SEND_BURST: String(BURST),
      MAX_SOCKETS_PER_USER: '2',
    };
    const ports = [await freePort(), await freePort()];
    servers.push(...(await Promise.all(ports.map((port) => startServerProcess(env, port, 90_000)))));
    token = await signToken(SECRET, 'alice', 3600);
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await database?.close();
    await scratch?.drop();
  });

  const gql = async (server: ServerProcess, query: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: any; errors?: { extensions?: { code?: string } }[] };
  };

  it(`stores at most the burst (${BURST}) of sends spread over both processes`, async () => {
    const created = await gql(servers[0]!, 'mutation { createConversation(input: { memberIds: [] }) { conversation { id } } }');
    const conversationId = created.data.createConversation.conversation.id;
    const answers = await Promise.all(
      Array.from({ length: 3 * BURST }, (_, n) =>
        gql(servers[n % 2]!, 'mutation ($c: ID!, $k: String!) { sendMessage(input: { conversationId: $c, clientMsgId: $k, text: "x" }) { message { seq } } }', {
          c: conversationId,
          k: `k${n}`,
        }),
      ),
    );
    const refused = answers.filter((a) => a.errors?.[0]?.extensions?.code === 'RATE_LIMITED').length;
    const stored = (await gql(servers[1]!, 'query ($id: ID!) { conversation(id: $id) { maxSeq } }', { id: conversationId })).data.conversation.maxSeq;
    // A fixed window may roll over once while the burst is sent: never more than two windows' worth.
    expect({ storedAtMostBurst: stored <= BURST, everyAnswerAccounted: stored + refused === 3 * BURST }).toEqual({
      storedAtMostBurst: true,
      everyAnswerAccounted: true,
    });
  });

  it('holds MAX_SOCKETS_PER_USER across processes: two sockets on one, the third on the other is closed with 4429', async () => {
    const open = (server: ServerProcess) =>
      createClient({ url: webSocketUrl(server.url), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: false, onNonLazyError: () => {} });
    const connected = (client: ReturnType<typeof open>) =>
      new Promise<number | 'connected'>((resolve) => {
        client.on('connected', () => resolve('connected'));
        client.on('closed', (event) => resolve((event as { code: number }).code));
      });
    const first = open(servers[0]!);
    const second = open(servers[0]!);
    expect(await Promise.all([connected(first), connected(second)])).toEqual(['connected', 'connected']);
    const third = open(servers[1]!);
    expect(await connected(third)).toBe(4429);
    await Promise.all([first.dispose(), second.dispose(), third.dispose()]);
  });
});
