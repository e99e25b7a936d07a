/**
 * The inbox row of `npm run bench`: the first inbox page (20, with each
 * conversation's last message and unread count) of a member of 50,000
 * conversations against a member of 20, through a server in production
 * mode, one request at a time; and a send, one at a time, into groups of
 * 5 and of `LARGE_GROUP_MEMBERS` members (the most a send copies its
 * activity to: see src/history/inboxFanout.ts) and of one more (large: it
 * copies none). Both
 * members are also in three large groups, which the inbox merges in at
 * read time. Target (issue 19): the first page of the member of 50,000
 * within 2x of the member of 20's (it took 20-30x when the inbox read
 * every membership).
 *
 * Builds its data set in a database of its own on the same PostgreSQL
 * (`backscroll_inbox_bench`), set-based, and drops it at the end: it never
 * writes to the benchmark's seeded database.
 *
 * Run alone: `DATABASE_URL=... node --import tsx bench/inbox.ts` (any
 * database of the server: it only names the server); `INBOX_BENCH_KEEP=1`
 * keeps the database afterwards.
 */
import { pathToFileURL } from 'node:url';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { signToken } from '../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate.ts';
import { conversationGlobalId } from '../src/history/globalId.ts';
import { LARGE_GROUP_MEMBERS } from '../src/history/inboxFanout.ts';
import { reindexInbox } from '../src/store/inboxIndex.ts';
import { BENCH_SECRET, startBenchServer } from './benchServer.ts';
import { num, type ResultTable, words } from './table.ts';

const DATABASE = 'backscroll_inbox_bench';
const HEAVY = 'inbox-bench-heavy';
const LIGHT = 'inbox-bench-light';
const HEAVY_CONVERSATIONS = 50_000;
const LIGHT_CONVERSATIONS = 20;
const LARGE_GROUPS = 3;
const PAGE = 20;
/** Timed requests per row, after as many untimed ones. */
const READS = 200;
const SENDS = 200;
/** Conversations are inserted this many at a time. */
const CHUNK = 10_000;
const TARGET_RATIO = 2;

/** The groups a send is timed into: by members, the first of them the sender. */
const SEND_GROUPS = [5, LARGE_GROUP_MEMBERS, LARGE_GROUP_MEMBERS + 1] as const;

const INBOX = `query Inbox($first: Int) {
  viewer { conversations(first: $first) {
    edges { cursor node { id title lastActivityAt unreadCount unreadCountCapped
      lastMessage { seq sender { id } content { __typename ... on TextContent { text } } } } }
    pageInfo { hasNextPage endCursor }
  } }
}`;
const SEND = `mutation Send($conversationId: ID!, $clientMsgId: String!, $text: String!) {
  sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text }) { message { seq } }
}`;

/** Milliseconds at the median and the 99th percentile. */
interface Timing {
  p50: number;
  p99: number;
}

/** What the inbox row measured. */
export interface InboxMeasurement {
  heavy: Timing;
  light: Timing;
  /** Send timings by group size. */
  sends: Record<number, Timing>;
}

/** `url` with its database replaced by `name`. */
function withDatabase(url: string, name: string): string {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

/** Uuids of conversation `k` of a kind: fixed, so a run can be read in the database while it lasts. */
const uuidOf = (kind: number, k: number) => `00000000-0000-4000-c00${kind}-${k.toString(16).padStart(12, '0')}`;

/**
 * The data set, set-based: the heavy member's conversations (each with one
 * other member and one message, activity spread over the last 30 days), the
 * light member's, the large groups both are in, and the send groups.
 */
async function seed(db: DatabaseHandle, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  const owned = async (kind: number, count: number, userId: string, from: number) => {
    for (let start = 0; start < count; start += CHUNK) {
      const ids = Array.from({ length: Math.min(CHUNK, count - start) }, (_, i) => uuidOf(kind, start + i));
      await db.db.transaction(async (tx) => {
        await tx.execute(sql`insert into conversations (id, kind, title, max_seq, last_activity_at)
          select id, 'group', 'inbox bench', 1, now() - ${from}::int * interval '1 day' - random() * interval '30 days'
          from unnest(${sql.param(ids)}::uuid[]) id`);
        await tx.execute(sql`insert into members (conv_id, user_id, role)
          select id, ${userId}, 'owner' from unnest(${sql.param(ids)}::uuid[]) id
          union all select id, 'inbox-peer-' || ${kind}::int || '-' || k, 'member' from unnest(${sql.param(ids)}::uuid[]) with ordinality as c(id, k)`);
        await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
          select c.id, 1, 'inbox-peer-' || ${kind}::int || '-' || u.k, 'inbox-bench-1', c.last_activity_at
          from unnest(${sql.param(ids)}::uuid[]) with ordinality as u(id, k) join conversations c on c.id = u.id`);
        await tx.execute(sql`insert into message_bodies (conv_id, seq, text) select id, 1, 'hello from the inbox bench' from unnest(${sql.param(ids)}::uuid[]) id`);
        await tx.execute(reindexInbox(ids));
      });
      log(`inbox: ${(start + ids.length).toLocaleString('en')} of ${count.toLocaleString('en')} conversations of ${userId}, ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  };
  await owned(1, HEAVY_CONVERSATIONS, HEAVY, 0);
  await owned(2, LIGHT_CONVERSATIONS, LIGHT, 0);
  const groups = async (kind: number, sizes: readonly number[], extra: string[]) => {
    const ids = sizes.map((_, k) => uuidOf(kind, k));
    await db.db.transaction(async (tx) => {
      await tx.execute(sql`insert into conversations (id, kind, title, last_activity_at)
        select id, 'group', 'inbox bench group', now() - random() * interval '2 days' from unnest(${sql.param(ids)}::uuid[]) id`);
      await tx.execute(sql`insert into members (conv_id, user_id, role)
        select g.id, 'inbox-group-' || ${kind}::int || '-' || g.k || '-' || m, case when m = 0 then 'owner' else 'member' end
        from unnest(${sql.param(ids)}::uuid[], ${sql.param([...sizes])}::int[]) with ordinality as g(id, size, k),
          generate_series(0, g.size - 1 - ${extra.length}::int) m
        union all
        select id, u, 'member' from unnest(${sql.param(ids)}::uuid[]) id, unnest(${sql.param(extra)}::text[]) u`);
      await tx.execute(reindexInbox(ids));
    });
  };
  await groups(3, Array.from({ length: LARGE_GROUPS }, () => 2 * LARGE_GROUP_MEMBERS), [HEAVY, LIGHT]);
  await groups(4, SEND_GROUPS, []);
  log(`inbox: vacuum analyze, ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await db.db.execute(sql`vacuum analyze conversations, members, messages, message_bodies, user_inbox`);
}

/** Median and 99th percentile of `times`. */
function timing(times: number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)]!, p99: sorted[Math.floor(sorted.length * 0.99)]! };
}

/** Posts `body` as `token`'s user; throws on any error. */
async function post(url: string, token: string, body: string): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"errors"')) throw new Error(`inbox bench: ${response.status} ${text.slice(0, 300)}`);
}

/** Times the first inbox page of both members, interleaved (a burst of load elsewhere lands on both), one request at a time. */
async function timeInboxes(url: string): Promise<{ heavy: Timing; light: Timing }> {
  const tokens = { heavy: await signToken(BENCH_SECRET, HEAVY, 3600), light: await signToken(BENCH_SECRET, LIGHT, 3600) };
  const body = JSON.stringify({ query: INBOX, variables: { first: PAGE } });
  const times = { heavy: [] as number[], light: [] as number[] };
  for (let i = 0; i < 2 * READS; i++) {
    for (const who of ['heavy', 'light'] as const) {
      const started = performance.now();
      await post(url, tokens[who], body);
      if (i >= READS) times[who].push(performance.now() - started);
    }
  }
  return { heavy: timing(times.heavy), light: timing(times.light) };
}

/** Times sends into each send group, one at a time, interleaved, by each group's owner. */
async function timeSends(url: string): Promise<Record<number, Timing>> {
  const runId = Math.random().toString(36).slice(2, 8);
  const times = new Map<number, number[]>(SEND_GROUPS.map((size) => [size, []]));
  const tokens = await Promise.all(SEND_GROUPS.map((_, k) => signToken(BENCH_SECRET, `inbox-group-4-${k + 1}-0`, 3600)));
  for (let i = 0; i < 2 * SENDS; i++) {
    for (const [k, size] of SEND_GROUPS.entries()) {
      const body = JSON.stringify({ query: SEND, variables: { conversationId: conversationGlobalId(uuidOf(4, k)), clientMsgId: `inbox-${runId}-${i}`, text: `inbox bench send ${i}` } });
      const started = performance.now();
      await post(url, tokens[k]!, body);
      if (i >= SENDS) times.get(size)!.push(performance.now() - started);
    }
  }
  return Object.fromEntries(SEND_GROUPS.map((size) => [size, timing(times.get(size)!)]));
}

/**
 * Measures the inbox row in a database of its own on the server of
 * `serverUrl` (any database URL of that server), with a server of
 * `workers` processes started for it.
 */
export async function measureInbox(serverUrl: string, workers: number, log: (line: string) => void): Promise<InboxMeasurement> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const url = withDatabase(serverUrl, DATABASE);
  try {
    await admin.unsafe(`drop database if exists ${DATABASE} with (force)`);
    await admin.unsafe(`create database ${DATABASE}`);
    const db = await openDatabase({ kind: 'postgres', url, poolSize: 1, statementTimeoutMs: 0 });
    try {
      await applyMigrations(db);
      await seed(db, log);
    } finally {
      await db.close();
    }
    const server = await startBenchServer(url, workers);
    try {
      log(`inbox: first inbox page (${PAGE}) of members of ${HEAVY_CONVERSATIONS.toLocaleString('en')} and ${LIGHT_CONVERSATIONS} conversations, ${READS} timed each`);
      const inboxes = await timeInboxes(server.url);
      log(`inbox: sends into groups of ${SEND_GROUPS.join(', ')} members, ${SENDS} timed each`);
      const sends = await timeSends(server.url);
      return { ...inboxes, sends };
    } finally {
      server.process.kill('SIGTERM');
      await new Promise((resolve) => server.process.once('exit', resolve));
    }
  } finally {
    // INBOX_BENCH_KEEP=1 leaves it, to look at plans afterwards (the next run drops it first).
    if (process.env.INBOX_BENCH_KEEP !== '1') await admin.unsafe(`drop database if exists ${DATABASE} with (force)`);
    await admin.end();
  }
}

/** The inbox tables: both members' first page and their ratio against the target, then the sends. */
export function inboxTables(m: InboxMeasurement): ResultTable[] {
  const ratio = m.heavy.p50 / m.light.p50;
  const row = (label: string, t: Timing) => ({ label, cells: [num(t.p50, 2), num(t.p99, 2)] });
  return [
    {
      id: 'inbox',
      title: `First inbox page (${PAGE}) through the server, one request at a time; both members are also in ${LARGE_GROUPS} large groups`,
      header: ['', 'p50 ms', 'p99 ms'],
      rows: [
        row(`member of ${HEAVY_CONVERSATIONS.toLocaleString('en')} conversations`, m.heavy),
        row(`member of ${LIGHT_CONVERSATIONS} conversations`, m.light),
        { label: `ratio at p50 (target ≤ ${TARGET_RATIO}x)`, cells: [{ text: `${ratio.toFixed(2)}x`, value: ratio }, words(ratio <= TARGET_RATIO ? 'met' : 'NOT met')] },
      ],
    },
    {
      id: 'inbox-sends',
      title: `sendMessage, one at a time, by group size (up to ${LARGE_GROUP_MEMBERS} members a send moves each member's inbox row; past it, none)`,
      header: ['', 'p50 ms', 'p99 ms'],
      rows: SEND_GROUPS.map((size) => row(`${size} members${size > LARGE_GROUP_MEMBERS ? ' (large)' : ''}`, m.sends[size]!)),
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('bench/inbox.ts needs DATABASE_URL (it only names the server: the data goes into a database of its own).');
  const { printTable } = await import('./table.ts');
  const m = await measureInbox(databaseUrl, Number(process.env.BENCH_WORKERS ?? 2), (line) => process.stdout.write(`${line}\n`));
  for (const table of inboxTables(m)) process.stdout.write(`\n${printTable(table)}\n`);
  process.stdout.write(`${JSON.stringify(m)}\n`);
}
