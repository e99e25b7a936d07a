/**
 * `GET /metrics`: requests go through the real server, then a scrape shows
 * each figure moved by exactly what they did, and the text parses as the
 * Prometheus exposition format.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveBodies } from '../../src/archive/archiver.ts';
import { createArchiveReader, setProcessArchive } from '../../src/archive/reader.ts';
import { folderStore, type SegmentStore } from '../../src/archive/segmentStore.ts';
import { createRunner } from '../../src/db/runner.ts';
import { encodeCursor } from '../../src/history/cursor.ts';
import { sql } from 'drizzle-orm';
import { seedAgedMessages, textOf } from '../helpers/archive.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { type LiveClient, liveClient } from '../helpers/liveClient.ts';
import { createGroup, MESSAGES, send } from '../helpers/operations.ts';

const DURATION = 'backscroll_graphql_request_duration_seconds';
const STATEMENTS = 'backscroll_graphql_request_sql_statements';
const ERRORS = 'backscroll_graphql_errors_total';
const IN_USE = 'backscroll_db_pool_connections_in_use';
const WAITING = 'backscroll_db_pool_waiting';
const POOL_SIZE = 'backscroll_db_pool_size';
const SUBSCRIPTIONS = 'backscroll_subscriptions_open';
const SEND_STATEMENTS = 'backscroll_send_statement_sends';
const ARCHIVE_SEGMENTS = 'backscroll_archive_segments';
const ARCHIVE_MESSAGES = 'backscroll_archive_messages';
const ARCHIVE_BYTES = 'backscroll_archive_bytes';
const COLD_FETCHES = 'backscroll_archive_cold_fetches_total';
const COLD_FETCH_DURATION = 'backscroll_archive_cold_fetch_duration_seconds';
const CACHE_HITS = 'backscroll_archive_cache_hits_total';
const CACHE_MISSES = 'backscroll_archive_cache_misses_total';
const UNREADABLE = 'backscroll_archive_unreadable_segments_total';
const PROBLEMS = ['missing', 'corrupt', 'unreachable', 'not-configured', 'timeout'];
const EVENTS = 'subscription Events($id: ID!) { conversationEvents(conversationId: $id) { kind seq } }';

/** One scrape: every sample by its series (`name{label="value",...}` as written), and every family's type. */
interface Scrape {
  samples: Map<string, number>;
  types: Map<string, string>;
}

const NAME = String.raw`[a-zA-Z_:][a-zA-Z0-9_:]*`;
const LABEL = String.raw`[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"`;
const SAMPLE = new RegExp(String.raw`^(${NAME})(\{(?:${LABEL}(?:,${LABEL})*,?)?\})? (\S+)(?: -?\d+)?$`);
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+)|NaN|[+-]Inf)$/i;

/**
 * Parses the text exposition format (version 0.0.4) strictly: HELP and TYPE
 * lines, empty lines, then samples of a declared family (histograms as `_bucket`, `_sum`,
 * `_count`), each a name, optional labels and a number. Throws on any other line.
 */
function parseExposition(text: string): Scrape {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    // The format ignores empty lines (prom-client separates families with one).
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (comment !== null) {
      if (comment[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram', 'summary', 'untyped']).toContain(comment[3]);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (sample === null) throw new Error(`Not a line of the exposition format: ${JSON.stringify(line)}`);
    const [, name, labels = '', value] = sample;
    const family = name!.replace(/_(bucket|sum|count|total|created)$/, '');
    if (!types.has(name!) && !types.has(family)) throw new Error(`A sample of an undeclared family: ${line}`);
    if (!VALUE.test(value!)) throw new Error(`Not a number: ${line}`);
    const key = `${name}${labels}`;
    if (samples.has(key)) throw new Error(`A series twice: ${key}`);
    samples.set(key, Number(value!.replace(/Inf$/i, 'Infinity')));
  }
  return { samples, types };
}

describe.each(backends)('Metrics (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let live: LiveClient | undefined;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
  });
  afterAll(async () => {
    await live?.dispose();
    await harness.close();
  });

  const metricsUrl = () => new URL('/metrics', harness.server.url).toString();
  const scrape = async (): Promise<Scrape> => {
    const response = await fetch(metricsUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parseExposition(await response.text());
  };
  /** The value of `series` (0 when it has not appeared yet). */
  const value = (scraped: Scrape, series: string) => scraped.samples.get(series) ?? 0;

  it('answers the Prometheus text format, with the type of every family', async () => {
    const { types } = await scrape();
    expect(Object.fromEntries([DURATION, STATEMENTS, ERRORS, IN_USE, WAITING, POOL_SIZE, SUBSCRIPTIONS].map((n) => [n, types.get(n)]))).toEqual({
      [DURATION]: 'histogram',
      [STATEMENTS]: 'histogram',
      [ERRORS]: 'counter',
      [IN_USE]: 'gauge',
      [WAITING]: 'gauge',
      [POOL_SIZE]: 'gauge',
      [SUBSCRIPTIONS]: 'gauge',
    });
    // prom-client's process metrics come along.
    expect(types.get('process_cpu_user_seconds_total')).toBe('counter');
  });

  it('observes each request under its operation name, with the statements it sent', async () => {
    const conv = await createGroup(alice, ['bob']);
    await send(alice, conv.id, 'hello');
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await alice.gql(MESSAGES, { id: conv.id, last: 5 })).stats.statements).toBe(1);
    await alice.gql('{ viewer { id } }');
    const after = await scrape();
    const moved = (series: string) => value(after, series) - value(before, series);
    expect({
      pages: moved(`${DURATION}_count{operation="Page"}`),
      pageStatements: moved(`${STATEMENTS}_sum{operation="Page"}`),
      pagesWithAtMostOne: moved(`${STATEMENTS}_bucket{le="1",operation="Page"}`),
      pagesWithNone: moved(`${STATEMENTS}_bucket{le="0",operation="Page"}`),
      anonymous: moved(`${DURATION}_count{operation="anonymous"}`),
    }).toEqual({ pages: 3, pageStatements: 3, pagesWithAtMostOne: 3, pagesWithNone: 0, anonymous: 1 });
    expect(moved(`${DURATION}_sum{operation="Page"}`)).toBeGreaterThan(0);
  });

  it('observes how many sends each send statement took: one alone, and every one of overlapping sends once', async () => {
    const conv = await createGroup(alice, ['bob']);
    const before = await scrape();
    await send(alice, conv.id, 'alone');
    const alone = await scrape();
    await Promise.all(Array.from({ length: 12 }, (_, i) => send(alice, conv.id, `together ${i}`)));
    const after = await scrape();
    const moved = (from: Scrape, to: Scrape, series: string) => value(to, `${SEND_STATEMENTS}_${series}`) - value(from, `${SEND_STATEMENTS}_${series}`);
    expect([moved(before, alone, 'count'), moved(before, alone, 'sum'), moved(before, alone, 'bucket{le="1"}')]).toEqual([1, 1, 1]);
    // Every send counted once, in as many statements as overlapped (whether they did is timing: test/integration/sendCoalescer.test.ts makes them).
    expect(moved(alone, after, 'sum')).toBe(12);
    expect(moved(alone, after, 'count')).toBeGreaterThanOrEqual(1);
    expect(moved(alone, after, 'count')).toBeLessThanOrEqual(12);
    expect(moved(alone, after, 'bucket{le="32"}')).toBe(moved(alone, after, 'count'));
  });

  it('counts errors by code, including requests refused before they were GraphQL', async () => {
    const before = await scrape();
    await alice.gql(MESSAGES, { id: 'no-such-conversation', last: 5 });
    await harness.post(JSON.stringify({ query: '{ viewer { id } }' }));
    await harness.post('{"query": ', { authorization: `Bearer ${alice.token}` });
    await alice.gql('{ viewer { idd } }');
    const after = await scrape();
    const moved = (code: string) => value(after, `${ERRORS}{code="${code}"}`) - value(before, `${ERRORS}{code="${code}"}`);
    expect({
      NOT_FOUND: moved('NOT_FOUND'),
      UNAUTHENTICATED: moved('UNAUTHENTICATED'),
      BAD_REQUEST: moved('BAD_REQUEST'),
      GRAPHQL_VALIDATION_FAILED: moved('GRAPHQL_VALIDATION_FAILED'),
    }).toEqual({ NOT_FOUND: 1, UNAUTHENTICATED: 1, BAD_REQUEST: 1, GRAPHQL_VALIDATION_FAILED: 1 });
  });

  it('keeps operation labels bounded: past 200 distinct names, the rest count as "other"', async () => {
    for (let i = 0; i < 210; i++) await alice.gql(`query Named${i} { __typename }`);
    const { samples } = await scrape();
    const operations = new Set([...samples.keys()].filter((k) => k.startsWith(`${DURATION}_count`)).map((k) => /operation="([^"]*)"/.exec(k)![1]));
    expect(operations.size).toBeLessThanOrEqual(202);
    expect(operations.has('other')).toBe(true);
    expect(value({ samples, types: new Map() }, `${DURATION}_count{operation="other"}`)).toBeGreaterThanOrEqual(10);
  });

  it('shows the pool in use and waiting while connections are held, and 0 again after', async () => {
    const runner = createRunner(harness.database.client);
    // The server's own background work (the live-event hub's audit, lease
    // renewals) holds a connection for a statement now and then: "idle" is
    // the first scrape that shows none in use, within a few seconds (the
    // ten-run CI loop once scraped 1 in use just after the release).
    const quiet = async () => {
      for (let attempt = 0; ; attempt++) {
        const sample = await scrape();
        if ((value(sample, IN_USE) === 0 && value(sample, WAITING) === 0) || attempt === 50) return sample;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const idle = await quiet();
    // On PostgreSQL the main pool and the read pool (DATABASE_READ_POOL_SIZE, 2 in the harness) together.
    expect(value(idle, POOL_SIZE)).toBe(backend === 'pglite' ? 1 : 12);
    expect([value(idle, IN_USE), value(idle, WAITING)]).toEqual([0, 0]);
    // Every connection of the main pool held by a transaction waiting on `release`, and one statement more.
    const size = harness.database.client.usage!.size;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holders = Array.from({ length: size }, () =>
      runner.transaction(async (tx) => {
        await tx.rows(sql`select 1`);
        await released;
      }),
    );
    const extra = runner.rows(sql`select 1`);
    const busy = await scrape();
    release();
    await Promise.all([...holders, extra]);
    expect([value(busy, IN_USE), value(busy, WAITING)]).toEqual([size, 1]);
    const after = await quiet();
    expect([value(after, IN_USE), value(after, WAITING)]).toEqual([0, 0]);
  });

  it('counts open subscriptions', async () => {
    const conv = await createGroup(alice, ['bob']);
    /** The gauge, scraped until it reads what the test expects: a subscription registers a moment after it is sent. */
    const open = async () => value(await scrape(), SUBSCRIPTIONS);
    await expect.poll(open, { timeout: 5000 }).toBe(0);
    live = liveClient(harness.server.url, { authorization: `Bearer ${alice.token}` });
    const first = live.subscribe(EVENTS, { id: conv.id });
    const second = live.subscribe(EVENTS, { id: conv.id });
    await expect.poll(open, { timeout: 5000 }).toBe(2);
    first.unsubscribe();
    await expect.poll(open, { timeout: 5000 }).toBe(1);
    second.unsubscribe();
    await expect.poll(open, { timeout: 5000 }).toBe(0);
  });
});

describe('Metrics behind METRICS_TOKEN', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness('pglite', { METRICS_TOKEN: 'scrape-me-please' });
  });
  afterAll(() => harness.close());

  const status = async (headers: Record<string, string> = {}, method = 'GET') =>
    (await fetch(new URL('/metrics', harness.server.url), { method, headers })).status;

  it('answers 401 without the token or with another, 200 with it, and 405 to anything but GET', async () => {
    expect([
      await status(),
      await status({ authorization: 'Bearer scrape-me' }),
      await status({ authorization: 'scrape-me-please' }),
      await status({ authorization: 'Bearer scrape-me-please' }),
      await status({ authorization: 'Bearer scrape-me-please' }, 'POST'),
    ]).toEqual([401, 401, 401, 200, 405]);
  });
});

describe.each(backends)('Archive metrics (%s)', { timeout: 60_000 }, (backend) => {
  const TOTAL = 300;
  const KEEP_NEWEST = 20;
  const MiB = 1024 * 1024;
  const PAGE = `query Page($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    conversation(id: $id) {
      messages(first: $first, after: $after, last: $last, before: $before) {
        edges { node { seq content { ... on TextContent { text } } } }
        cutShort { reason }
      }
    }
  }`;
  let harness: Harness;
  let alice: Client;
  let folder: string;
  let store: SegmentStore;
  let conv: { id: string; uuid: string };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    folder = await mkdtemp(join(tmpdir(), 'backscroll-archive-metrics-'));
    store = folderStore(folder);
    conv = await createGroup(alice, ['bob'], 'archive metrics');
    const db = createRunner(harness.database.client);
    await seedAgedMessages(db, conv.uuid, 'alice', TOTAL, 30);
    const summary = await archiveBodies(db, store, { before: new Date(), keepNewest: KEEP_NEWEST, limits: { messages: 50, bytes: 10 * MiB }, orphanGraceMs: 0 });
    expect([summary.segments, summary.messages]).toEqual([6, TOTAL - KEEP_NEWEST]);
    setProcessArchive(createArchiveReader(store, 64 * MiB));
  });
  afterAll(async () => {
    setProcessArchive(null);
    await harness.close();
    await rm(folder, { recursive: true, force: true });
  });

  const scrape = async (): Promise<Scrape> => parseExposition(await (await fetch(new URL('/metrics', harness.server.url))).text());
  const value = (scraped: Scrape, series: string) => scraped.samples.get(series) ?? 0;
  /** How the reader's counters moved between two scrapes. */
  const readsMoved = (before: Scrape, after: Scrape) => {
    const moved = (series: string) => value(after, series) - value(before, series);
    return {
      fetches: moved(COLD_FETCHES),
      timed: moved(`${COLD_FETCH_DURATION}_count`),
      hits: moved(CACHE_HITS),
      misses: moved(CACHE_MISSES),
      ...Object.fromEntries(PROBLEMS.map((problem) => [problem, moved(`${UNREADABLE}{problem="${problem}"}`)])),
    };
  };
  const page = async (variables: Record<string, unknown>) => {
    const response = await alice.gql(PAGE, { id: conv.id, ...variables });
    expect(response.status).toBe(200);
    return response;
  };
  const noReads = { fetches: 0, timed: 0, hits: 0, misses: 0, missing: 0, corrupt: 0, unreachable: 0, 'not-configured': 0, timeout: 0 };

  it('declares every archive family with its type, and every problem from the start', async () => {
    const { types, samples } = await scrape();
    expect(Object.fromEntries([ARCHIVE_SEGMENTS, ARCHIVE_MESSAGES, ARCHIVE_BYTES, COLD_FETCHES, COLD_FETCH_DURATION, CACHE_HITS, CACHE_MISSES, UNREADABLE].map((n) => [n, types.get(n)]))).toEqual({
      [ARCHIVE_SEGMENTS]: 'gauge',
      [ARCHIVE_MESSAGES]: 'gauge',
      [ARCHIVE_BYTES]: 'gauge',
      [COLD_FETCHES]: 'counter',
      [COLD_FETCH_DURATION]: 'histogram',
      [CACHE_HITS]: 'counter',
      [CACHE_MISSES]: 'counter',
      [UNREADABLE]: 'counter',
    });
    expect(PROBLEMS.map((problem) => samples.has(`${UNREADABLE}{problem="${problem}"}`))).toEqual(PROBLEMS.map(() => true));
  });

  it('shows what the archive holds: its segments, their messages, and the bytes the store holds', async () => {
    let storedBytes = 0;
    for await (const object of store.list()) storedBytes += object.bytes;
    const scraped = await scrape();
    expect([value(scraped, ARCHIVE_SEGMENTS), value(scraped, ARCHIVE_MESSAGES), value(scraped, ARCHIVE_BYTES)]).toEqual([6, TOTAL - KEEP_NEWEST, storedBytes]);
    expect(storedBytes).toBeGreaterThan(0);
  });

  it('counts a cold fetch and a miss for the first read of a segment, and a cache hit for the next', async () => {
    const before = await scrape();
    const cold = await page({ last: 50, before: encodeCursor(conv.uuid, 101) });
    const cached = await scrape();
    const warm = await page({ last: 50, before: encodeCursor(conv.uuid, 101) });
    const after = await scrape();
    for (const response of [cold, warm]) {
      expect(response.data.conversation.messages.edges.map((e: { node: { content: { text: string } } }) => e.node.content.text)).toEqual(
        Array.from({ length: 50 }, (_, i) => textOf(51 + i)),
      );
    }
    expect({ cold: readsMoved(before, cached), warm: readsMoved(cached, after) }).toEqual({
      cold: { ...noReads, fetches: 1, timed: 1, misses: 1 },
      warm: { ...noReads, hits: 1 },
    });
    expect(value(after, `${COLD_FETCH_DURATION}_sum`)).toBeGreaterThan(value(before, `${COLD_FETCH_DURATION}_sum`));
  });

  it('counts a read of a segment whose object is gone under missing, and the page as ARCHIVE_UNAVAILABLE', async () => {
    const [first] = await createRunner(harness.database.client).rows<{ key: string }>(
      sql`select key from archive_segments where conv_id = ${conv.uuid} and from_seq = 1`,
    );
    await store.delete(first!.key);
    const before = await scrape();
    const response = await page({ first: 10 });
    const after = await scrape();
    expect(response.errors?.map((e) => e.extensions?.code)).toEqual(['ARCHIVE_UNAVAILABLE']);
    expect(readsMoved(before, after)).toEqual({ ...noReads, fetches: 1, timed: 1, misses: 1, missing: 1 });
    expect(value(after, `${ERRORS}{code="ARCHIVE_UNAVAILABLE"}`) - value(before, `${ERRORS}{code="ARCHIVE_UNAVAILABLE"}`)).toBe(1);
  });
});
