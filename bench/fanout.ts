/**
 * The fan-out row of `npm run bench`: 500 subscribers (distinct users, all
 * members of one group of its own) hold `conversationEvents` open on the
 * server under test over WebSocket, while one member sends 200 messages over
 * HTTP at a steady rate. Measured per (subscriber, message): from the moment
 * the send left the bench to the moment the event arrived with the message's
 * text. Subscribers and sender share this process and its clock.
 *
 * Leaves the database as it found it: the group and everything in it are
 * deleted at the end (and before, should an interrupted run have left it).
 *
 * Run alone: `DATABASE_URL=... node --import tsx bench/fanout.ts` starts its
 * own server process (BENCH_WORKERS, default 2) for the measurement.
 */
import { BENCH_SECRET, serverCpuMs, startBenchServer } from './benchServer.ts';
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import { createClient, type Client as SocketClient } from 'graphql-ws';
import WebSocket from 'ws';
import { signToken } from '../src/auth/tokens.ts';
import { openDatabase } from '../src/db/client.ts';
import { conversationGlobalId } from '../src/history/globalId.ts';
import { reindexInbox } from '../src/store/inboxIndex.ts';
import { num, type ResultTable } from './table.ts';

const FANOUT = { subscribers: 500, messages: 200, perSecond: 20 };
/** The group's id: apart from the seeded ones (`...-4000-8000-...`) and the purge row's (`...-4000-9000-...`). */
const CONVERSATION_ID = '00000000-0000-4000-a000-000000000000';
const SENDER = 'fanout-sender';
const subscriberId = (i: number) => `fanout-${i}`;
/** How long after the last send missing deliveries are waited for. */
const DRAIN_MS = 30_000;

const EVENTS = `subscription Events($id: ID!) {
  conversationEvents(conversationId: $id) { kind seq message { content { ... on TextContent { text } } } }
}`;
const SEND = `mutation Send($conversationId: ID!, $clientMsgId: String!, $text: String!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text }) { message { seq } }
}`;

/** What the fan-out row measured. */
export interface FanoutMeasurement {
  subscribers: number;
  messages: number;
  /** Deliveries expected: subscribers x messages. */
  expected: number;
  delivered: number;
  /** Send-to-delivery latency over every delivery, ms. */
  p50: number;
  p99: number;
  max: number;
  /** Deliveries per second, from the first send to the last delivery. */
  perSecond: number;
  /**
   * CPU time of the server's processes per 1,000 deliveries, ms, from the
   * first send to the last delivery (sends included): what the cost of an
   * event is, even on a box too busy for its latencies to mean much.
   */
  serverCpuMsPer1000: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

/** Deletes the group and everything in it. */
async function removeGroup(databaseUrl: string): Promise<void> {
  const db = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 1 });
  try {
    await db.db.transaction(async (tx) => {
      for (const table of ['message_hide_ranges', 'message_bodies', 'messages', 'conversation_changes', 'members']) {
        await tx.execute(sql`delete from ${sql.identifier(table)} where conv_id = ${CONVERSATION_ID}`);
      }
      await tx.execute(sql`delete from conversations where id = ${CONVERSATION_ID}`);
    });
  } finally {
    await db.close();
  }
}

/** Creates the group with its sender (owner) and subscribers, set-based. */
async function createGroup(databaseUrl: string, subscribers: number): Promise<void> {
  const db = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 1 });
  try {
    await db.db.transaction(async (tx) => {
      await tx.execute(sql`insert into conversations (id, kind, title) values (${CONVERSATION_ID}, 'group', 'fan-out bench')`);
      await tx.execute(sql`insert into members (conv_id, user_id, role)
        select ${CONVERSATION_ID}::uuid, ${SENDER}, 'owner'
        union all
        select ${CONVERSATION_ID}::uuid, 'fanout-' || k, 'member' from generate_series(0, ${subscribers - 1}) k`);
      await tx.execute(reindexInbox([CONVERSATION_ID]));
    });
  } finally {
    await db.close();
  }
}

/**
 * Measures fan-out on the server whose GraphQL endpoint is `url` (tokens
 * signed with `secret`), in the database at `databaseUrl`.
 */
export async function measureFanout(
  databaseUrl: string,
  url: string,
  secret: string,
  log: (line: string) => void,
  serverCpu: () => number = () => NaN,
  { subscribers, messages, perSecond } = FANOUT,
): Promise<FanoutMeasurement> {
  await removeGroup(databaseUrl);
  await createGroup(databaseUrl, subscribers);
  const sockets: SocketClient[] = [];
  try {
    const id = conversationGlobalId(CONVERSATION_ID);
    const senderToken = await signToken(secret, SENDER, 3600);
    const runId = Math.random().toString(36).slice(2, 8);
    let sends = 0;
    const send = async (text: string): Promise<number> => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${senderToken}` },
        body: JSON.stringify({ query: SEND, variables: { conversationId: id, clientMsgId: `fanout-${runId}-${sends++}`, text } }),
      });
      const body = (await response.json()) as { data?: { sendMessage: { message: { seq: number } } }; errors?: unknown };
      if (!body.data) throw new Error(`a fan-out send failed: ${JSON.stringify(body.errors)}`);
      return body.data.sendMessage.message.seq;
    };

    // Per message index: when its send left; per subscriber: the latest seq seen.
    const sentAt: number[] = [];
    const latencies: number[] = [];
    const latestSeq = new Array<number>(subscribers).fill(0);
    let lastDeliveryAt = 0;
    let failures = 0;
    const socketUrl = url.replace(/^http/, 'ws');
    log(`fan-out: connecting ${subscribers} subscribers...`);
    for (let i = 0; i < subscribers; i++) {
      const token = await signToken(secret, subscriberId(i), 3600);
      const socket = createClient({ url: socketUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
      sockets.push(socket);
      socket.subscribe<{ conversationEvents: { seq: number; message: { content: { text?: string } } | null } }>(
        { query: EVENTS, variables: { id } },
        {
          next: (result) => {
            const event = result.data?.conversationEvents;
            if (!event) {
              failures += 1;
              return;
            }
            latestSeq[i] = event.seq;
            const match = /^fanout (\d+)$/.exec(event.message?.content.text ?? '');
            if (match === null) return;
            const now = performance.now();
            latencies.push(now - sentAt[Number(match[1])]!);
            lastDeliveryAt = now;
          },
          error: () => (failures += 1),
          complete: () => undefined,
        },
      );
    }
    // graphql-ws does not acknowledge a subscription: send until every subscriber has seen one.
    for (let attempt = 0; ; attempt++) {
      const seq = await send('warm-up');
      const deadline = Date.now() + 2000;
      while (latestSeq.some((s) => s < seq) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (latestSeq.every((s) => s >= seq)) break;
      if (attempt === 20) throw new Error(`only ${latestSeq.filter((s) => s >= seq).length} of ${subscribers} subscriptions went live`);
    }

    log(`fan-out: ${messages} messages at ${perSecond}/s to ${subscribers} subscribers...`);
    const started = performance.now();
    const cpuAtStart = serverCpu();
    const pending: Promise<number>[] = [];
    for (let k = 0; k < messages; k++) {
      const due = started + (k * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sentAt[k] = performance.now();
      pending.push(send(`fanout ${k}`));
    }
    await Promise.all(pending);
    const expected = subscribers * messages;
    const drainUntil = performance.now() + DRAIN_MS;
    while (latencies.length < expected && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 50));
    const cpuMs = serverCpu() - cpuAtStart;
    if (failures > 0) log(`fan-out: ${failures} subscriptions reported errors`);
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      subscribers,
      messages,
      expected,
      delivered: latencies.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? NaN,
      perSecond: latencies.length / ((lastDeliveryAt - started) / 1000),
      serverCpuMsPer1000: (cpuMs * 1000) / latencies.length,
    };
  } finally {
    await Promise.all(sockets.map((socket) => socket.dispose()));
    await removeGroup(databaseUrl);
  }
}

/** The fan-out table. */
export function fanoutTable(m: FanoutMeasurement): ResultTable {
  return {
    id: 'fanout',
    title: `Live fan-out (${m.subscribers} subscribers of one group over WebSocket, one member sending ${m.messages} messages at ${FANOUT.perSecond}/s; latency from send to each delivery)`,
    header: ['', 'delivered', 'p50 ms', 'p99 ms', 'max ms', 'deliveries/s', 'server CPU ms per 1,000'],
    rows: [
      {
        label: `${m.subscribers} subscribers x ${m.messages} messages`,
        cells: [
          { text: `${m.delivered.toLocaleString('en')} of ${m.expected.toLocaleString('en')}`, value: m.delivered },
          num(m.p50, 1),
          num(m.p99, 1),
          num(m.max, 1),
          num(m.perSecond),
          num(m.serverCpuMsPer1000, 1),
        ],
      },
    ],
  };
}

// Run alone: a server process of its own, then one measurement.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('bench/fanout.ts needs DATABASE_URL.');
  const server = await startBenchServer(databaseUrl, Number(process.env.BENCH_WORKERS ?? 2));
  try {
    const m = await measureFanout(databaseUrl, server.url, BENCH_SECRET, (line) => process.stdout.write(`${line}\n`), () => serverCpuMs(server.process.pid!));
    process.stdout.write(`${JSON.stringify(m)}\n`);
  } finally {
    server.process.kill('SIGTERM');
  }
}
