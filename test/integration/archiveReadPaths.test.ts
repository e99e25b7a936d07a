/**
 * Issue 16's "Reads" promise, path by path, through the GraphQL API: after
 * the archiver moves a conversation's older bodies into several segments,
 * `message`, `node`, `messages(around:)`, `messagesAround`, `messagesAt`,
 * pages both ways across the archived/warm boundary, the change feed, the
 * inbox's last message and a subscriber's catch-up from an event cursor
 * answer exactly as they did before (at most one statement more: the
 * batched read of the bodies the page statement no longer finds warm), for members
 * whose views differ: deleted-for-me, revoked, cleared, expired by
 * retention, joined later (SINCE_JOINED). Then an owner revokes an archived
 * message and an admin erases a sender: every path shows RevokedContent and
 * PurgedContent where the text was, and the archived text is never served.
 * On PGlite and PostgreSQL, with the folder store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveBodies } from '../../src/archive/archiver.ts';
import { type ArchiveReader, createArchiveReader, setProcessArchive } from '../../src/archive/reader.ts';
import { folderStore, type SegmentStore } from '../../src/archive/segmentStore.ts';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { decodeConversationId, messageGlobalId } from '../../src/history/globalId.ts';
import { seedAgedMessages, textOf } from '../helpers/archive.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type GraphQLResponse, type Harness, startHarness } from '../helpers/harness.ts';
import { type LiveClient, liveClient, type LiveSubscription, untilLive } from '../helpers/liveClient.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';

const MiB = 1024 * 1024;
const DAY_MS = 86_400_000;
/** Each conversation's newest seqs that stay warm. */
const KEEP_NEWEST = 20;
/** Small segments, so history spans several and pages cross from one to the next. */
const SEGMENT_MESSAGES = 64;
const PAGE = 40;

/**
 * The shared conversation's history, oldest first: who sent each run of
 * seqs and how many days ago. The oldest run is past the group's 40-day
 * retention; carol clears after the second; dave joins (SINCE_JOINED)
 * after the third; erin's run is erased after archiving.
 */
const RUNS = [
  { sender: 'alice', count: 60, ageDays: 45 }, // 1..60: expired
  { sender: 'alice', count: 60, ageDays: 38 }, // 61..120: carol clears through 120
  { sender: 'bob', count: 60, ageDays: 36 }, // 121..180: dave joins at 180
  { sender: 'erin', count: 60, ageDays: 34 }, // 181..240: erin's, erased later
  { sender: 'alice', count: 60, ageDays: 32 }, // 241..300: 281..300 stay warm
] as const;
const TOTAL = 300;
const RETENTION_DAYS = 40;
/** Revoked by alice (the owner) before archiving: an archived seq of hers, one of bob's, a warm one. */
const REVOKED_BEFORE = [70, 150, 290];
/** Deleted for himself by bob: archived runs and single seqs, and every warm seq (so his inbox preview is archived). */
const HIDDEN_BY_BOB = [...Array.from({ length: 11 }, (_, i) => 100 + i), 200, 250, ...Array.from({ length: 20 }, (_, i) => 281 + i)];
/** The newest archived seq: revoked by the owner after archiving (bob's newest visible message, his inbox preview). */
const REVOKED_AFTER = 280;
/** Looked up by id: one per view and edge (expired, revoked, hidden, cleared, below the joining floor, erin's, boundary, warm). */
const LOOKUP_SEQS = [30, 70, 105, 150, 200, 250, 280, 281, 290];
/** Jump anchors: hidden from bob and cleared by carol; erin's and hidden from bob; the archived side of the boundary. */
const ANCHOR_SEQS = [105, 200, 280];
/** Jumps by date, as how long ago: before everything, half a minute into alice's second run and into erin's, after the newest (the newest page). */
const JUMPS_AGO: [string, number][] = [
  ['50 days ago', 50 * DAY_MS],
  ["into alice's second run", 38 * DAY_MS - 30_000],
  ["into erin's run", 34 * DAY_MS - 30_000],
  ['after the newest message', 31 * DAY_MS],
];

const CONTENT = `content { __typename ... on TextContent { text } ... on RevokedContent { revokedAt revokedBy { id } } ... on PurgedContent { purgedAt } }`;
const NODE = `id seq sender { id } createdAt ${CONTENT}`;
const CONNECTION = `edges { cursor node { ${NODE} } }
  pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
  startSeq endSeq latestSeq anchorFound gaps { from to }`;
const MESSAGE = `query ($id: ID!) { message(id: $id) { ${NODE} } }`;
const NODE_QUERY = `query ($id: ID!) { node(id: $id) { id ... on Message { ${NODE} } } }`;
const PAGE_QUERY = `query ($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  conversation(id: $id) { messages(first: $first, after: $after, last: $last, before: $before) { ${CONNECTION} } } }`;
const AROUND_QUERY = `query ($id: ID!, $around: ID!) { conversation(id: $id) { messages(around: $around, last: 15, first: 15) { ${CONNECTION} } } }`;
const MESSAGES_AROUND_QUERY = `query ($id: ID!, $messageId: ID!) { conversation(id: $id) { messagesAround(messageId: $messageId) { ${CONNECTION} } } }`;
const AT_QUERY = `query ($id: ID!, $time: DateTime!) { conversation(id: $id) { messagesAt(time: $time, before: 10, after: 10) { ${CONNECTION} } } }`;
const CHANGES_QUERY = `query ($id: ID!) { conversation(id: $id) { changes(first: 500) { changes { kind fromSeq toSeq user { id } at } hasMore goneThroughSeq } } }`;
const INBOX_QUERY = `query { viewer { conversations(first: 10) { edges { node { id lastMessage { ${NODE} } } } } } }`;
const CREATE_SINCE_JOINED = `mutation ($memberIds: [ID!]!) {
  createConversation(input: { title: "archived read paths", memberIds: $memberIds, historyVisibility: SINCE_JOINED }) { conversation { id } } }`;
const ADD = `mutation ($id: ID!, $users: [ID!]!) { addMembers(input: { conversationId: $id, userIds: $users }) { addedCount } }`;
const RETENTION = `mutation ($id: ID!, $days: Int) {
  setRetentionPolicy(input: { conversationId: $id, days: $days }) { conversation { retentionPolicy { expiredThroughSeq } } } }`;
const ERASE = `mutation ($userId: ID!) { eraseUser(input: { userId: $userId }) { erasedCount } }`;
const EVENTS = `subscription ($id: ID!) { conversationEvents(conversationId: $id) { kind seq toSeq cursor message { ${NODE} } } }`;

/** What one request answered, as compared before and after archiving. */
interface Answer {
  data: unknown;
  /** Each error's path and code (message texts are not part of the contract). */
  errors: { path: unknown; code: unknown }[];
  statements: number;
  /** Each loader batch, in order: `body` among them, so "one batched body read" is compared too. */
  batches: string[];
}

/** The read paths this file covers, each a set of named readings. */
type PathName = 'lookups' | 'jumps' | 'dates' | 'pages' | 'changes' | 'inbox' | 'catch-up';

/** One reading of a path: a request (or a walk of requests), answered in order. */
interface Reading {
  path: PathName;
  key: string;
  read(): Promise<GraphQLResponse[]>;
}

const answerOf = (response: GraphQLResponse): Answer => ({
  data: response.data,
  errors: (response.errors ?? []).map((e) => ({ path: e.path, code: e.extensions?.code })),
  statements: response.stats.statements,
  batches: response.stats.batches.map((b) => `${b.loader}:${b.size}`),
});

/** `value` with the content of every message whose id is in `contents` replaced by that content (a deep copy). */
function withContents(value: unknown, contents: ReadonlyMap<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => withContents(v, contents));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([k, v]) => [k, withContents(v, contents)] as const);
  const copy = Object.fromEntries(entries) as Record<string, unknown>;
  if (typeof copy.id === 'string' && 'content' in copy && contents.has(copy.id)) copy.content = contents.get(copy.id);
  return copy;
}

describe.each(backends)('Every read path over archived messages (%s)', { timeout: 60_000 }, (backend) => {
  let harness: Harness;
  let db: SqlRunner;
  let store: SegmentStore;
  let reader: ArchiveReader;
  let folder: string;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let dave: Client;
  let admin: Client;
  /** The shared conversation (RUNS) and the one bob resumes from an event cursor. */
  let conv: { id: string; uuid: string };
  let live: { id: string; uuid: string };
  /** The cursor of the last event bob received in `live` before its history grew and was archived. */
  let resumeCursor: string;
  /** The seqs of `live` seeded after that event, archived later. */
  let missedSeqs: number[];
  const sockets: LiveClient[] = [];
  const readings: Reading[] = [];
  const before = new Map<string, GraphQLResponse[]>();
  /** Each of JUMPS_AGO as an instant, fixed once the history is written. */
  const jumpTimes = new Map<string, string>();

  const idOf = (seq: number) => messageGlobalId(conv.uuid, seq);
  const viewers = () => [alice, bob, carol, dave];
  const socketOf = (client: Client) => {
    const socket = liveClient(harness.server.url, { authorization: `Bearer ${client.token}` });
    sockets.push(socket);
    return socket;
  };
  const ok = (response: GraphQLResponse) => {
    expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
    return response;
  };

  /** `client`'s walk of `convId` in `direction` from `cursor` (null: from the end) to the far end, every page's response. */
  async function walk(client: Client, convId: string, direction: 'backward' | 'forward', cursor: string | null = null): Promise<GraphQLResponse[]> {
    const pages: GraphQLResponse[] = [];
    for (let i = 0; i < 50; i++) {
      const variables = direction === 'backward' ? { last: PAGE, before: cursor } : { first: PAGE, after: cursor };
      const response = ok(await client.gql(PAGE_QUERY, { id: convId, ...variables }));
      pages.push(response);
      const { pageInfo } = response.data.conversation.messages;
      if (!(direction === 'backward' ? pageInfo.hasPreviousPage : pageInfo.hasNextPage)) return pages;
      cursor = direction === 'backward' ? pageInfo.startCursor : pageInfo.endCursor;
    }
    throw new Error(`${client.userId}'s ${direction} walk did not end`);
  }

  /** Every reading of every path, by every viewer. */
  function allReadings(): Reading[] {
    const list: Reading[] = [];
    const one = (path: PathName, key: string, request: () => Promise<GraphQLResponse>) => list.push({ path, key, read: async () => [await request()] });
    for (const client of viewers()) {
      const who = client.userId;
      for (const seq of LOOKUP_SEQS) {
        one('lookups', `${who} message(${seq})`, () => client.gql(MESSAGE, { id: idOf(seq) }));
        one('lookups', `${who} node(${seq})`, () => client.gql(NODE_QUERY, { id: idOf(seq) }));
      }
      for (const seq of ANCHOR_SEQS) {
        one('jumps', `${who} messages(around: ${seq})`, () => client.gql(AROUND_QUERY, { id: conv.id, around: idOf(seq) }));
        one('jumps', `${who} messagesAround(${seq})`, () => client.gql(MESSAGES_AROUND_QUERY, { id: conv.id, messageId: idOf(seq) }));
      }
      for (const [label] of JUMPS_AGO) {
        one('dates', `${who} messagesAt(${label})`, () => client.gql(AT_QUERY, { id: conv.id, time: jumpTimes.get(label) }));
      }
      for (const direction of ['backward', 'forward'] as const) {
        list.push({ path: 'pages', key: `${who} ${direction} walk`, read: () => walk(client, conv.id, direction) });
      }
      one('changes', `${who} changes`, () => client.gql(CHANGES_QUERY, { id: conv.id }));
      one('inbox', `${who} inbox`, () => client.gql(INBOX_QUERY));
    }
    list.push({ path: 'catch-up', key: 'bob catching up from his last event', read: () => walk(bob, live.id, 'forward', resumeCursor) });
    return list;
  }

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
    folder = await mkdtemp(join(tmpdir(), 'backscroll-read-paths-'));
    store = folderStore(folder);
    reader = createArchiveReader(store, 64 * MiB);
    setProcessArchive(reader);
    [alice, bob, carol, dave, admin] = await Promise.all([
      harness.client('alice'),
      harness.client('bob'),
      harness.client('carol'),
      harness.client('dave'),
      harness.client('root', { roles: ['admin'] }),
    ]);

    // The shared conversation, its history and every view of it.
    const created = ok(await alice.gql(CREATE_SINCE_JOINED, { memberIds: ['bob', 'carol', 'erin'] }));
    const convId = created.data.createConversation.conversation.id as string;
    conv = { id: convId, uuid: decodeConversationId(convId)! };
    for (const [i, run] of RUNS.entries()) {
      await seedAgedMessages(db, conv.uuid, run.sender, run.count, run.ageDays);
      if (i === 1) ok(await carol.gql(CLEAR, { conversationId: conv.id }));
      if (i === 2) expect(ok(await alice.gql(ADD, { id: conv.id, users: ['dave'] })).data.addMembers.addedCount).toBe(1);
    }
    const retention = ok(await alice.gql(RETENTION, { id: conv.id, days: RETENTION_DAYS }));
    expect(retention.data.setRetentionPolicy.conversation.retentionPolicy.expiredThroughSeq).toBe(RUNS[0].count);
    for (const seq of REVOKED_BEFORE) ok(await alice.gql(REVOKE, { messageId: idOf(seq) }));
    ok(await bob.gql(DELETE_FOR_ME, { messageIds: HIDDEN_BY_BOB.map(idOf) }));
    for (const [label, ago] of JUMPS_AGO) jumpTimes.set(label, new Date(Date.now() - ago).toISOString());

    // bob follows a second conversation live, then drops off; 150 messages
    // arrive while he is away and grow old enough to be archived.
    live = await createGroup(alice, ['bob'], 'resumed');
    const events = socketOf(bob).subscribe(EVENTS, { id: live.id });
    await untilLive(events, async () => (await send(alice, live.id, 'poke')).seq);
    const last = await send(alice, live.id, 'seen live');
    let event;
    do event = (await events.next()).data?.conversationEvents;
    while (event?.seq !== last.seq);
    resumeCursor = event.cursor;
    await sockets.pop()!.dispose();
    // What bob saw live was sent 31 days ago, as far as the archiver knows; what he missed, 30.
    await db.rows(sql`update messages set created_at = now() - interval '31 days' where conv_id = ${live.uuid}`);
    const base = last.seq;
    await seedAgedMessages(db, live.uuid, 'alice', 150, 30);
    missedSeqs = Array.from({ length: 150 }, (_, i) => base + 1 + i);

    readings.push(...allReadings());
  });
  afterAll(async () => {
    await Promise.all(sockets.splice(0).map((s) => s.dispose()));
    setProcessArchive(null);
    await harness?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('answers every reading before archiving, archived-to-be messages with their text', async () => {
    for (const reading of readings) before.set(reading.key, await reading.read());
    // The comparisons after archiving are only worth something if these readings show archived text.
    const archivedTexts = (key: string) => {
      const seqs = [...before.get(key)!.map((r) => r.text).join('\n').matchAll(/"text":"message (\d+) /g)].map((match) => Number(match[1]));
      return seqs.filter((seq) => seq <= TOTAL - KEEP_NEWEST);
    };
    for (const reading of readings.filter((r) => r.path === 'pages' || r.path === 'jumps')) {
      expect(archivedTexts(reading.key), `${reading.key} shows archived-to-be text`).not.toEqual([]);
    }
    for (const who of ['alice', 'bob', 'carol', 'dave']) expect(archivedTexts(`${who} message(250)`), who).toEqual(who === 'bob' ? [] : [250]);
    expect(archivedTexts("carol messagesAt(into alice's second run)")).toContain(121);
    expect(archivedTexts("dave messagesAt(into erin's run)")).not.toEqual([]);
    const bobsInbox = before.get('bob inbox')![0]!.data.viewer.conversations.edges as { node: { id: string; lastMessage: unknown } }[];
    expect(bobsInbox.find((e) => e.node.id === conv.id)!.node.lastMessage).toMatchObject({
      seq: REVOKED_AFTER,
      content: { __typename: 'TextContent', text: textOf(REVOKED_AFTER) },
    });
    const catchUp = before.get('bob catching up from his last event')!;
    const caughtUp = catchUp.flatMap((r) => r.data.conversation.messages.edges.map((e: { node: { seq: number; content: unknown } }) => e.node));
    expect(caughtUp.slice(0, missedSeqs.length)).toEqual(
      missedSeqs.map((seq) => expect.objectContaining({ seq, content: { __typename: 'TextContent', text: textOf(seq) } })),
    );
    // And the views differ: bob and carol cannot read 105, dave cannot read 150, nobody 30.
    expect(before.get('alice message(105)')![0]!.errors).toBeUndefined();
    for (const key of ['bob message(105)', 'carol message(105)', 'dave message(150)', 'alice message(30)']) {
      expect(answerOf(before.get(key)![0]!).errors, key).toEqual([{ path: ['message'], code: 'NOT_FOUND' }]);
    }
  });

  it(`archives all but each conversation's newest ${KEEP_NEWEST}, in several segments`, async () => {
    const summary = await archiveBodies(db, store, { before: new Date(), keepNewest: KEEP_NEWEST, limits: { messages: SEGMENT_MESSAGES, bytes: 256 * 1024 } });
    expect(summary.skipped).toBe(0);
    const segments = await db.rows<{ conv_id: string; from_seq: number; to_seq: number }>(
      sql`select conv_id, from_seq::int, to_seq::int from archive_segments where conv_id = ${conv.uuid} order by from_seq`,
    );
    expect(segments.length).toBeGreaterThanOrEqual(Math.floor((TOTAL - KEEP_NEWEST - REVOKED_BEFORE.length) / SEGMENT_MESSAGES));
    expect(segments.at(-1)!.to_seq).toBe(TOTAL - KEEP_NEWEST);
    const warm = await db.rows<{ seq: number }>(sql`select seq::int from message_bodies where conv_id = ${conv.uuid} order by seq`);
    expect(warm.map((r) => r.seq)).toEqual(Array.from({ length: KEEP_NEWEST }, (_, i) => TOTAL - KEEP_NEWEST + 1 + i).filter((s) => !REVOKED_BEFORE.includes(s)));
    const liveWarm = await db.rows<{ n: number }>(sql`select count(*)::int as n from message_bodies where conv_id = ${live.uuid} and seq <= ${missedSeqs.at(-1)! - KEEP_NEWEST}`);
    expect(liveWarm).toEqual([{ n: 0 }]);
  });

  const paths: [PathName, string][] = [
    ['lookups', 'message(id:) and node(id:) on archived messages, for every view'],
    ['jumps', 'messages(around:) and messagesAround on archived anchors'],
    ['dates', 'messagesAt into archived history'],
    ['pages', 'pages both ways across the archived/warm boundary'],
    ['changes', 'the change feed over archived seqs'],
    ['inbox', "the inbox's last message, archived for bob (he deleted the warm ones)"],
    ['catch-up', "a subscriber's catch-up from an event cursor before the archived messages"],
  ];
  it.each(paths)('answers %s exactly as before archiving: %s, at most one body read more', async (path) => {
    const fetchesBefore = reader.stats.fetches + reader.stats.hits;
    const shape = (a: Answer) => ({ data: a.data, errors: a.errors });
    const otherBatches = (a: Answer) => a.batches.filter((batch) => !batch.startsWith('body:'));
    for (const reading of readings.filter((r) => r.path === path)) {
      const after = (await reading.read()).map(answerOf);
      const earlier = before.get(reading.key)!.map(answerOf);
      expect(after.map(shape), reading.key).toEqual(earlier.map(shape));
      // A page statement joins warm bodies only: archived ones cost one batched read, the same for any page size.
      after.forEach((answer, i) => {
        expect(answer.statements - earlier[i]!.statements, reading.key).toBeGreaterThanOrEqual(0);
        expect(answer.statements - earlier[i]!.statements, reading.key).toBeLessThanOrEqual(1);
        expect(answer.batches.filter((batch) => batch.startsWith('body:')).length, reading.key).toBeLessThanOrEqual(1);
        expect(otherBatches(answer), reading.key).toEqual(otherBatches(earlier[i]!));
      });
    }
    // Archived bodies were read from segments, not found warm somewhere.
    if (path !== 'changes') expect(reader.stats.fetches + reader.stats.hits).toBeGreaterThan(fetchesBefore);
  });

  it('reads a page of archived messages, across two segments, with one statement and one body batch more than a warm page', async () => {
    const newest = ok(await alice.gql(PAGE_QUERY, { id: conv.id, last: KEEP_NEWEST }));
    expect(newest.data.conversation.messages.edges[0].node.seq).toBe(TOTAL - KEEP_NEWEST + 1);
    const segments = await db.rows<{ from_seq: number }>(sql`select from_seq::int from archive_segments where conv_id = ${conv.uuid} order by from_seq`);
    // KEEP_NEWEST archived messages around the start of the newest segment: the end of the one before, the start of that one.
    const boundary = segments.at(-1)!.from_seq;
    const after = await cursorOf(boundary - KEEP_NEWEST / 2 - 1);
    const read = reader.stats.fetches + reader.stats.hits;
    const page = ok(await alice.gql(PAGE_QUERY, { id: conv.id, first: KEEP_NEWEST, after }));
    const seqs = (page.data.conversation.messages.edges as { node: { seq: number } }[]).map((e) => e.node.seq);
    expect(seqs).toEqual(Array.from({ length: KEEP_NEWEST }, (_, i) => boundary - KEEP_NEWEST / 2 + i));
    expect(Math.max(...seqs)).toBeLessThanOrEqual(TOTAL - KEEP_NEWEST);
    // Each of the two segments was asked for once.
    expect(reader.stats.fetches + reader.stats.hits - read).toBe(2);
    expect(page.stats.statements).toBe(newest.stats.statements + 1);
    expect(newest.stats.batches.filter((b) => b.loader === 'body')).toEqual([]);
    expect(page.stats.batches.filter((b) => b.loader === 'body')).toEqual([{ loader: 'body', size: KEEP_NEWEST }]);
  });

  /** Alice's page cursor at `seq` of the shared conversation, taken from a jump to it. */
  async function cursorOf(seq: number): Promise<string> {
    const jump = ok(await alice.gql(AROUND_QUERY, { id: conv.id, around: idOf(seq) }));
    const edge = (jump.data.conversation.messages.edges as { cursor: string; node: { seq: number } }[]).find((e) => e.node.seq === seq);
    expect(edge, `alice sees ${seq}`).toBeDefined();
    return edge!.cursor;
  }

  /**
   * Re-reads every reading (but the feed's) that showed one of `contents`' messages
   * before archiving, and compares it with that answer with `contents` in place
   * (data and errors); none of them may serve any of `forbidden`.
   */
  async function expectEveryPathWith(contents: ReadonlyMap<string, unknown>, forbidden: string[]) {
    const ids = [...contents.keys()].map((id) => JSON.stringify(id));
    const showed = readings.filter((r) => r.path !== 'changes' && before.get(r.key)!.some((response) => ids.some((id) => response.text.includes(id))));
    expect(new Set(showed.map((r) => r.path))).toEqual(new Set(paths.map(([path]) => path).filter((path) => path !== 'changes' && path !== 'catch-up')));
    const shape = (a: Answer) => ({ data: a.data, errors: a.errors });
    for (const reading of showed) {
      const after = await reading.read();
      const expected = before.get(reading.key)!.map(answerOf).map((a) => ({ ...shape(a), data: withContents(a.data, contents) }));
      expect(after.map(answerOf).map(shape), reading.key).toEqual(expected);
      const served = after.flatMap((response) => forbidden.filter((text) => response.text.includes(text)));
      expect(served, `${reading.key} serves forbidden text`).toEqual([]);
    }
  }

  /** The change feed of `client` as read before archiving, with `entries` appended. */
  const feedWith = (client: Client, entries: unknown[]) => {
    const feed = (before.get(`${client.userId} changes`)![0]!.data as { conversation: { changes: { changes: unknown[] } } }).conversation.changes;
    return { conversation: { changes: { ...feed, changes: [...feed.changes, ...entries] } } };
  };

  let revokedAt: string;
  it('lets the owner revoke an archived message: RevokedContent on every path, its text never served again', async () => {
    const revoked = ok(await alice.gql(REVOKE, { messageId: idOf(REVOKED_AFTER) }));
    revokedAt = revoked.data.revokeMessage.message.content.revokedAt;
    expect(revoked.data.revokeMessage.message.content).toEqual({ __typename: 'RevokedContent', revokedAt, revokedBy: { id: 'alice' } });
    expect(revoked.text).not.toContain(`message ${REVOKED_AFTER} `);
    const placeholder = { __typename: 'RevokedContent', revokedAt, revokedBy: { id: 'alice' } };
    await expectEveryPathWith(new Map([[idOf(REVOKED_AFTER), placeholder]]), [`message ${REVOKED_AFTER} `]);
    // The feed gains the revoke, for every member who can see that seq.
    for (const client of viewers()) {
      const feed = ok(await client.gql(CHANGES_QUERY, { id: conv.id }));
      const entry = { kind: 'REVOKED', fromSeq: REVOKED_AFTER, toSeq: REVOKED_AFTER, user: null, at: expect.any(String) };
      expect(feed.data, `${client.userId} changes`).toEqual(feedWith(client, [entry]));
    }
  });

  it("erases a sender's archived messages: PurgedContent on every path, none of their text served", async () => {
    const erinsSeqs = Array.from({ length: RUNS[3].count }, (_, i) => RUNS.slice(0, 3).reduce((n, r) => n + r.count, 0) + 1 + i);
    expect(ok(await admin.gql(ERASE, { userId: 'erin' })).data.eraseUser.erasedCount).toBe(erinsSeqs.length);
    const contents = new Map<string, unknown>([
      [idOf(REVOKED_AFTER), { __typename: 'RevokedContent', revokedAt, revokedBy: { id: 'alice' } }],
      ...erinsSeqs.map((seq) => [idOf(seq), { __typename: 'PurgedContent', purgedAt: expect.any(String) }] as const),
    ]);
    await expectEveryPathWith(contents, [`message ${REVOKED_AFTER} `, ...erinsSeqs.map((seq) => `message ${seq} `)]);
    for (const client of viewers()) {
      const feed = ok(await client.gql(CHANGES_QUERY, { id: conv.id }));
      const entries = [
        { kind: 'REVOKED', fromSeq: REVOKED_AFTER, toSeq: REVOKED_AFTER, user: null, at: expect.any(String) },
        { kind: 'ERASED', fromSeq: erinsSeqs[0], toSeq: erinsSeqs.at(-1), user: { id: 'erin' }, at: expect.any(String) },
      ];
      expect(feed.data, `${client.userId} changes`).toEqual(feedWith(client, entries));
    }
  });

  it('tells a live subscriber of a revoke of an archived message with RevokedContent, never the text', async () => {
    const events: LiveSubscription = socketOf(bob).subscribe(EVENTS, { id: live.id });
    await untilLive(events, async () => (await send(alice, live.id, 'poke again')).seq);
    const target = missedSeqs[10]!;
    ok(await alice.gql(REVOKE, { messageId: messageGlobalId(live.uuid, target) }));
    let result;
    do result = await events.next();
    while (result.data?.conversationEvents.kind !== 'MESSAGE_REVOKED');
    expect(result.errors).toBeUndefined();
    expect(result.data.conversationEvents).toMatchObject({
      kind: 'MESSAGE_REVOKED',
      seq: target,
      message: { seq: target, sender: { id: 'alice' }, content: { __typename: 'RevokedContent', revokedBy: { id: 'alice' } } },
    });
    expect(JSON.stringify(result)).not.toContain(`message ${target} `);
    // Catching up again from the old cursor shows the placeholder where the archived text was, and the rest as before.
    const caughtUp = (await walk(bob, live.id, 'forward', resumeCursor)).flatMap((r) => r.data.conversation.messages.edges);
    const beforeEdges = before.get('bob catching up from his last event')!.flatMap((r) => r.data.conversation.messages.edges);
    const revokedId = messageGlobalId(live.uuid, target);
    expect(caughtUp.slice(0, beforeEdges.length)).toEqual(
      withContents(beforeEdges, new Map([[revokedId, { __typename: 'RevokedContent', revokedAt: expect.any(String), revokedBy: { id: 'alice' } }]])),
    );
  });
});
