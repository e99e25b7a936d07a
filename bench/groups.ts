/**
 * The groups row of `npm run bench`: what a group's size costs. Two groups
 * of their own, of 10 and of 10,000 members, each with 10,000 messages;
 * in each, through the server under test: a send, the newest page (50),
 * the same page with `readCount` on every message, a markRead that moves a
 * member's cursor, and `members(first: 100)`, asked by the same number of
 * members (ACTORS) in both groups. Half the members of each group have read
 * everything, the others up to a point spread over the history, so the
 * newest page's receipts count about half the group. Targets: in the group
 * of 10,000, the page with `readCount` within 2x the page without it, and
 * the member list within 2x of the small group's.
 *
 * The machine is shared and its load comes and goes, so each figure is
 * made of ROUNDS short runs, interleaved with the runs it is compared with
 * (small group, large group, each operation in turn): a burst of load from
 * elsewhere lands on both sides of a ratio rather than on one.
 *
 * Leaves the database as it found it: the groups and every row keyed by
 * them are deleted at the end (and before, should an interrupted run have
 * left them).
 *
 *   node --import tsx bench/groups.ts load <operation> <size> <round> <url> <connections> <seconds>   (one load process)
 */
import { runGraphQLLoad } from './graphqlLoad.ts';
import { spawn } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { signToken } from '../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../src/db/client.ts';
import { rowsOf } from '../src/db/rows.ts';
import { conversationGlobalId } from '../src/history/globalId.ts';
import { reindexInbox } from '../src/store/inboxIndex.ts';
import { combineRuns, type LoadResult } from './loadResult.ts';
import { type Cell, num, printTable, type ResultTable, words } from './table.ts';

/** The two groups: their ids are apart from the seeded ones (`...-4000-8000-...`), the purge's (`9000`) and the fan-out's (`a000`). */
const GROUPS = [
  { size: 10, id: '00000000-0000-4000-b000-000000000010' },
  { size: 10_000, id: '00000000-0000-4000-b000-000000010000' },
] as const;
type GroupSize = (typeof GROUPS)[number]['size'];
const HISTORY = 10_000;
const CONNECTIONS = 10;
const ROUNDS = 3;
/**
 * The members who make the requests, in either group: the first 10. Per-user
 * work (token checks, rate-limit counters that 10 users share) then weighs
 * the same in both, and only the size of the group differs.
 */
const ACTORS = 10;
/** How far markRead may move each member in one round: rounds start apart, so every markRead still moves a cursor. */
const MOVES_PER_ROUND = 1_500;
const TARGET_RATIO = 2;

/** Member k of the group of `size`; member 0 owns it. */
const memberId = (size: number, k: number) => `groups-${size}-${k}`;
/**
 * Where member k's read cursor starts: even members have read everything,
 * odd ones up to a seq spread over the first half of the history, which
 * leaves markRead room for ROUNDS x MOVES_PER_ROUND moves of each.
 */
const initialReadSeq = (k: number) => (k % 2 === 0 ? HISTORY : (k * 37) % (HISTORY / 2));

const OPERATIONS = ['send', 'page', 'page-receipts', 'mark-read', 'members'] as const;
type Operation = (typeof OPERATIONS)[number];
/**
 * The order of the runs: sends after every round of the others, so the
 * pages read the history as seeded, whose newest messages half the members
 * have read (a page of fresh sends would have no readers to count).
 */
const PHASES: Operation[][] = [['page', 'page-receipts', 'members', 'mark-read'], ['send']];
const LABELS: Record<Operation, string> = {
  send: 'sendMessage',
  page: 'newest page (50)',
  'page-receipts': 'newest page (50) with readCount',
  'mark-read': 'markRead (moves the cursor)',
  members: 'members(first: 100)',
};

const PAGE_NODE = `id seq createdAt sender { id } content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt revokedBy { id } } }`;
const page = (node: string) => `query Page($id: ID!) {
  conversation(id: $id) { messages(last: 50) { edges { cursor node { ${node} } } pageInfo { hasPreviousPage startCursor endCursor } } }
}`;
const QUERIES: Record<Operation, string> = {
  send: `mutation Send($conversationId: ID!, $clientMsgId: String!, $text: String!) {
    sendMessage(input: { conversationId: $conversationId, clientMsgId: $clientMsgId, text: $text }) { deduplicated message { id seq createdAt } }
  }`,
  page: page(PAGE_NODE),
  'page-receipts': page(`${PAGE_NODE} readCount`),
  'mark-read': `mutation MarkRead($conversationId: ID!, $seq: Seq!) { markRead(input: { conversationId: $conversationId, seq: $seq }) { conversation { id readSeq } } }`,
  members: `query Members($id: ID!) {
    conversation(id: $id) { members(first: 100) { edges { cursor node { user { id } role readSeq joinedAt } } pageInfo { hasNextPage endCursor } } }
  }`,
};

/** What the groups row measured: per group size, per operation, the figure and the runs it was made of. */
export type GroupsMeasurement = Record<GroupSize, Record<Operation, LoadResult & { runs: LoadResult[] }>>;

/** Every table with a `conv_id` column, so rows any path wrote for the groups go with them. */
async function removeGroups(db: DatabaseHandle): Promise<void> {
  const ids = sql.param(GROUPS.map((g) => g.id));
  const tables = rowsOf<{ table_name: string }>(
    await db.db.execute(sql`select table_name from information_schema.columns
      where table_schema = current_schema() and column_name = 'conv_id' order by table_name`),
  );
  await db.db.transaction(async (tx) => {
    for (const { table_name } of tables) await tx.execute(sql`delete from ${sql.identifier(table_name)} where conv_id = any(${ids}::uuid[])`);
    await tx.execute(sql`delete from conversations where id = any(${ids}::uuid[])`);
  });
}

/** Creates both groups with their members and history, set-based. */
async function createGroups(db: DatabaseHandle): Promise<void> {
  for (const { size, id } of GROUPS) {
    await db.db.transaction(async (tx) => {
      // Sends stamp messages no earlier than the conversation's last activity: the history ends a minute ago.
      await tx.execute(sql`insert into conversations (id, kind, title, max_seq, last_activity_at)
        values (${id}, 'group', ${`groups bench, ${size} members`}, ${HISTORY}, now() - interval '1 minute')`);
      await tx.execute(sql`insert into members (conv_id, user_id, role, joined_at, read_seq)
        select ${id}::uuid, 'groups-' || ${size} || '-' || k, case when k = 0 then 'owner' else 'member' end,
          now() - interval '2 days' + k * interval '1 millisecond',
          case when k % 2 = 0 then ${HISTORY} else (k * 37) % ${HISTORY / 2} end
        from generate_series(0, ${size - 1}) k`);
      await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
        select ${id}::uuid, g, 'groups-' || ${size} || '-' || (g % ${size}), 'groups-bench-' || g,
          now() - interval '1 minute' - (${HISTORY} - g) * interval '1 second'
        from generate_series(1, ${HISTORY}) g`);
      // Bodies carry a search vector as sent ones do; `to_tsvector('simple')` stands in for the tokenizer.
      await tx.execute(sql`insert into message_bodies (conv_id, seq, text, search_terms)
        select ${id}::uuid, g, t.text, to_tsvector('simple', t.text)
        from generate_series(1, ${HISTORY}) g, lateral (select 'group message ' || g || ' 群消息' as text) t`);
      await tx.execute(reindexInbox([id]));
    });
  }
}

let counter = 0;
const runId = Math.random().toString(36).slice(2, 8);
/** How far each odd member's cursor has been moved by this process, by member. */
const moved = new Map<number, number>();

/** The next request of `operation` in the group of `size` in round `round`: who asks, and the body. */
function nextRequest(operation: Operation, size: number, round: number, id: string): { k: number; body: string } {
  counter += 1;
  const conversationId = conversationGlobalId(id);
  if (operation === 'mark-read') {
    // An odd actor, one seq past where this round last moved them: every markRead moves a cursor.
    const k = 1 + 2 * Math.floor(Math.random() * (ACTORS / 2));
    const seq = (moved.get(k) ?? initialReadSeq(k) + round * MOVES_PER_ROUND) + 1;
    moved.set(k, seq);
    return { k, body: JSON.stringify({ query: QUERIES[operation], variables: { conversationId, seq: Math.min(seq, HISTORY) } }) };
  }
  const k = Math.floor(Math.random() * ACTORS);
  const variables =
    operation === 'send'
      ? { conversationId, clientMsgId: `groups-${runId}-${process.pid}-${counter}`, text: `group bench message ${counter} 群消息` }
      : { id: conversationId };
  return { k, body: JSON.stringify({ query: QUERIES[operation], variables }) };
}

/** One load process: autocannon as the group's members, one JSON LoadResult line. */
async function loadProcess(operation: Operation, size: number, round: number, url: string, connections: number, seconds: number): Promise<void> {
  const group = GROUPS.find((g) => g.size === size)!;
  // Signed ahead: autocannon's setupRequest is synchronous.
  const tokens = new Map<number, string>();
  for (let k = 0; k < ACTORS; k++) tokens.set(k, await signToken(process.env.JWT_SECRET!, memberId(size, k), 3600));
  const out = await runGraphQLLoad({
    url,
    connections,
    seconds,
    label: `groups ${operation} (${size})`,
    next: () => {
      const next = nextRequest(operation, size, round, group.id);
      return { body: next.body, token: tokens.get(next.k)! };
    },
  });
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** Runs a load process and reads its line. */
function load(operation: Operation, size: number, round: number, url: string, secret: string, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/groups.ts', 'load', operation, String(size), String(round), url, String(CONNECTIONS), String(seconds)],
      // The load process signs its tokens with the server's secret.
      { env: { ...process.env, JWT_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`groups load ${operation} ${size} exited ${code}: ${out}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as LoadResult);
    });
  });
}

/**
 * Measures the groups row against the server at `url` (tokens signed with
 * `secret`), in the database at `databaseUrl`: `seconds` per operation and
 * group, in ROUNDS interleaved runs.
 */
export async function measureGroups(
  databaseUrl: string,
  url: string,
  secret: string,
  seconds: number,
  log: (line: string) => void,
): Promise<GroupsMeasurement> {
  const db = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 1, statementTimeoutMs: 600_000 });
  try {
    await removeGroups(db);
    log(`groups: creating groups of ${GROUPS.map((g) => g.size.toLocaleString('en')).join(' and ')} members, ${HISTORY.toLocaleString('en')} messages each`);
    await createGroups(db);
    await db.db.execute(sql`vacuum analyze conversations, members, messages, message_bodies`);
    const runs = new Map<string, LoadResult[]>();
    const slice = seconds / ROUNDS;
    for (const phase of PHASES) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const operation of phase) {
          // Which group goes first alternates, so neither always runs just after the other.
          for (const { size } of round % 2 === 0 ? GROUPS : [...GROUPS].reverse()) {
            log(`groups: round ${round + 1} of ${ROUNDS}, ${LABELS[operation]}, ${size.toLocaleString('en')} members, ${Number(slice.toFixed(2))} s...`);
            const key = `${operation} ${size}`;
            runs.set(key, [...(runs.get(key) ?? []), await load(operation, size, round, url, secret, slice)]);
          }
        }
      }
    }
    const figures = (size: GroupSize) =>
      Object.fromEntries(
        OPERATIONS.map((operation) => {
          const made = runs.get(`${operation} ${size}`)!;
          return [operation, { ...combineRuns(made), runs: made }];
        }),
      ) as GroupsMeasurement[GroupSize];
    return { 10: figures(10), 10_000: figures(10_000) };
  } finally {
    await removeGroups(db);
    await db.close();
  }
}

/** The groups tables: each operation in both groups with the large group's cost against the small one's, then the targets. */
export function groupsTables(m: GroupsMeasurement, seconds: number): ResultTable[] {
  const [small, large] = [m[10], m[10_000]];
  const ratioCell = (ratio: number): Cell => ({ text: `${ratio.toFixed(2)}x`, value: ratio });
  const met = (ratio: number) => words(ratio <= TARGET_RATIO ? 'yes' : 'NO');
  const receipts = large['page-receipts'].p50 / large.page.p50;
  const memberList = large.members.p50 / small.members.p50;
  return [
    {
      id: 'groups',
      title: `Groups of 10 and 10,000 members (10,000 messages each; ${CONNECTIONS} connections, ${seconds} s each in ${ROUNDS} runs; p50 and p99: the runs' median)`,
      header: ['', '10: req/s', '10: p50 ms', '10: p99 ms', '10,000: req/s', '10,000: p50 ms', '10,000: p99 ms', '10,000 / 10 (p50)', 'failures'],
      rows: OPERATIONS.map((operation) => {
        const [a, b] = [small[operation], large[operation]];
        return {
          label: LABELS[operation],
          cells: [num(a.perSecond), num(a.p50, 2), num(a.p99, 2), num(b.perSecond), num(b.p50, 2), num(b.p99, 2), ratioCell(b.p50 / a.p50), num(a.failures + b.failures)],
        };
      }),
    },
    {
      id: 'groups-target',
      title: 'Groups against their targets (p50 latency)',
      header: ['', 'measured', 'target', 'met'],
      rows: [
        { label: 'page with readCount / page, 10,000 members', cells: [ratioCell(receipts), words(`≤ ${TARGET_RATIO}x`), met(receipts)] },
        { label: 'page with readCount / page, 10 members', cells: [ratioCell(small['page-receipts'].p50 / small.page.p50), words(''), words('')] },
        { label: 'members(first: 100), 10,000 members / 10', cells: [ratioCell(memberList), words(`≤ ${TARGET_RATIO}x`), met(memberList)] },
      ],
    },
  ];
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'load' && process.argv[1]?.endsWith('bench/groups.ts')) {
  await loadProcess(args[0] as Operation, Number(args[1]), Number(args[2]), args[3]!, Number(args[4]), Number(args[5]));
} else if (mode !== undefined && process.argv[1]?.endsWith('bench/groups.ts')) {
  // Against a running server: `node --import tsx bench/groups.ts <url>` with DATABASE_URL and its JWT_SECRET.
  const seconds = Number(process.env.BENCH_SECONDS ?? 15);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const m = await measureGroups(process.env.DATABASE_URL!, mode, process.env.JWT_SECRET!, seconds, log);
  for (const table of groupsTables(m, seconds)) log(`\n${printTable(table)}`);
}
