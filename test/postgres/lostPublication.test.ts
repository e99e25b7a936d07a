/**
 * A server process that dies between a write's commit and its publication
 * (BACKSCROLL_FAULT=die-before-publish, a test-only fault: the publisher
 * kills its own process with SIGKILL when it is about to publish) leaves the
 * write committed and never announced. A subscriber connected to another
 * process must not silently miss it: that process's audit finds the
 * conversation ahead of what it was told, closes the socket with 1012, and
 * the client, reconnecting and catching up from its last event cursor (and
 * its changes cursor), has every message and every revoke.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { decodeConversationId } from '../../src/history/globalId.ts';
import { rowsOf } from '../../src/db/rows.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { type LiveClient, liveClient, type LiveSubscription, untilLive } from '../helpers/liveClient.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

const SECRET = 'lost-publication-secret-that-is-at-least-32-chars';
const EVENTS = `subscription ($id: ID!) { conversationEvents(conversationId: $id) { kind seq cursor } }`;
const CREATE = `mutation { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }`;
const SEND = `mutation ($c: ID!, $k: String!, $t: String!) {
  sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $t }) { message { id seq } } }`;
const REVOKE = `mutation ($id: ID!) { revokeMessage(input: { messageId: $id }) { message { seq } } }`;
const CATCH_UP = `query ($id: ID!, $after: String, $changes: String) { conversation(id: $id) {
  messages(first: 100, after: $after) { edges { node { seq content { __typename ... on TextContent { text } } } } pageInfo { hasNextPage } }
  changes(after: $changes) { changes { kind fromSeq toSeq } cursor } } }`;
const CHANGES_CURSOR = `query ($id: ID!) { conversation(id: $id) { changes { cursor } } }`;
/** How long the audit may take to notice: its period, its grace period and a busy machine's slack. */
const NOTICED_WITHIN_MS = 15_000;

type Event = { kind: string; seq: number; cursor: string };

describe('A process that dies between commit and publication', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let database: DatabaseHandle;
  let healthy: ServerProcess;
  const doomed: ServerProcess[] = [];
  const sockets: LiveClient[] = [];
  const env = { JWT_SECRET: SECRET, NODE_ENV: 'production', LOG_LEVEL: 'warn' };

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
  /** A process that dies as soon as it is about to announce a write; answers once it has died. */
  const dyingProcess = async () => {
    const server = await startServerProcess({ ...env, DATABASE_URL: scratch.url, BACKSCROLL_FAULT: 'die-before-publish' }, await freePort());
    doomed.push(server);
    return server;
  };
  /** Runs `write` on `server`, which commits it and dies before announcing it (the answer may or may not get out first). */
  const writeAndDie = async (server: ServerProcess, write: () => Promise<unknown>) => {
    await write().catch(() => undefined);
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
  };
  /** Bob's events on `id` through the healthy process, live once this resolves. */
  const bobSubscribes = async (id: string, poke: () => Promise<number>) => {
    const socket = liveClient(healthy.url, { authorization: `Bearer ${await signToken(SECRET, 'bob', 3600)}` });
    sockets.push(socket);
    const events = socket.subscribe<{ conversationEvents: Event }>(EVENTS, { id });
    await untilLive(events, poke);
    return events;
  };
  /** Takes events up to and including the one at `seq`, answering the last. */
  const takeThrough = async (events: LiveSubscription<{ conversationEvents: Event }>, seq: number) => {
    let event: Event;
    do event = (await events.next()).data!.conversationEvents;
    while (event.seq !== seq);
    return event;
  };
  /** What a client does after a reconnect: every message after `after`, and the changes after `changes`. */
  const catchUp = async (id: string, after: string, changes: string) => {
    const { conversation } = await gql(healthy.url, 'bob', CATCH_UP, { id, after, changes });
    expect(conversation.messages.pageInfo.hasNextPage).toBe(false);
    return {
      messages: conversation.messages.edges.map((e: any) => ({ seq: e.node.seq, text: e.node.content.text ?? e.node.content.__typename })),
      changes: conversation.changes.changes,
    };
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 2 });
    await applyMigrations(database);
    healthy = await startServerProcess({ ...env, DATABASE_URL: scratch.url }, await freePort());
  }, 120_000);
  afterAll(async () => {
    await Promise.all(sockets.map((socket) => socket.dispose()));
    healthy?.child.kill('SIGTERM');
    for (const server of doomed) server.child.kill('SIGKILL');
    await healthy?.exited;
    await database?.close();
    await scratch?.drop();
  });

  it(
    'gets a send’s subscribers on another process resynced (1012), and catching up from their last event cursor loses nothing',
    { timeout: 120_000 },
    async () => {
      const id = (await gql(healthy.url, 'alice', CREATE)).createConversation.conversation.id as string;
      let n = 0;
      const send = async (url: string, text: string) => (await gql(url, 'alice', SEND, { c: id, k: `k${n++}`, t: text })).sendMessage.message.seq as number;
      const events = await bobSubscribes(id, () => send(healthy.url, 'poke'));
      const lastSeen = await takeThrough(events, await send(healthy.url, 'seen live'));

      const dying = await dyingProcess();
      await writeAndDie(dying, () => send(dying.url, 'committed, never announced'));
      // Announced by the healthy process, but behind the lost one: held back, never delivered out of order.
      const later = [await send(healthy.url, 'after the loss 1'), await send(healthy.url, 'after the loss 2')];

      expect(await Promise.race([events.ended, new Promise((resolve) => setTimeout(() => resolve('not noticed'), NOTICED_WITHIN_MS))])).toMatchObject({
        kind: 'closed',
        code: 1012,
      });
      expect(events.received.map((r) => r.data?.conversationEvents.seq).filter((seq) => seq! > lastSeen.seq)).toEqual([]);
      await healthy.waitForOutput('live events of a conversation were missed');

      // The lost send was committed: the conversation's newest seq is the last of the later ones.
      const stored = rowsOf<{ max_seq: number }>(await database.db.execute(sql`select max_seq from conversations where id = ${decodeConversationId(id)}`));
      expect(stored).toEqual([{ max_seq: later[1] }]);
      const changes = (await gql(healthy.url, 'bob', CHANGES_CURSOR, { id })).conversation.changes.cursor as string;
      expect(await catchUp(id, lastSeen.cursor, changes)).toEqual({
        messages: [
          { seq: lastSeen.seq + 1, text: 'committed, never announced' },
          { seq: later[0], text: 'after the loss 1' },
          { seq: later[1], text: 'after the loss 2' },
        ],
        changes: [],
      });
      // Reconnected, the subscriber is live again.
      await bobSubscribes(id, () => send(healthy.url, 'poke after the resync'));
    },
  );

  it('does the same for a revoke: catching up from the changes cursor finds it', { timeout: 120_000 }, async () => {
    const id = (await gql(healthy.url, 'alice', CREATE)).createConversation.conversation.id as string;
    let n = 0;
    const send = async (text: string) => (await gql(healthy.url, 'alice', SEND, { c: id, k: `k${n++}`, t: text })).sendMessage.message as { id: string; seq: number };
    const regret = await send('regret');
    const events = await bobSubscribes(id, async () => (await send('poke')).seq);
    const changes = (await gql(healthy.url, 'bob', CHANGES_CURSOR, { id })).conversation.changes.cursor as string;
    const lastSeen = await takeThrough(events, (await send('seen live')).seq);

    const dying = await dyingProcess();
    await writeAndDie(dying, () => gql(dying.url, 'alice', REVOKE, { id: regret.id }));

    expect(await Promise.race([events.ended, new Promise((resolve) => setTimeout(() => resolve('not noticed'), NOTICED_WITHIN_MS))])).toMatchObject({
      kind: 'closed',
      code: 1012,
    });
    expect(await catchUp(id, lastSeen.cursor, changes)).toEqual({
      messages: [],
      changes: [{ kind: 'REVOKED', fromSeq: regret.seq, toSeq: regret.seq }],
    });
  });
});
