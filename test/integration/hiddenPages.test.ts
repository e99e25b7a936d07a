/**
 * What a viewer hid costs nothing on their pages, and no page plan waits
 * for fresh statistics. A 20,000-message conversation written a moment ago
 * (never analyzed, autovacuum off), bob has deleted the newest 19,900 for
 * himself, 100 per call as the API allows; each page statement is run under
 * `EXPLAIN (ANALYZE, BUFFERS)`, prepared with a custom and a generic plan,
 * and must read a small multiple of the rows it answers, for bob as for alice,
 * and keep its plan once `analyze` has run.
 */
import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { encodeCursor } from '../../src/history/cursor.ts';
import { hideMessages } from '../../src/store/hides.ts';
import { scanAround, scanPage } from '../../src/store/pages.ts';
import type { RetentionClock } from '../../src/store/sqlFragments.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup, type Edge, MESSAGES } from '../helpers/operations.ts';
import { buffersTouched, explainPrepared, type PlanMode, type PlanNode, planShape, recordStatements, rowsRead } from '../helpers/preparedPlans.ts';

const MESSAGE_COUNT = 20_000;
const HIDDEN = 19_900;
const HIDES_PER_CALL = 100;
const PAGE = 50;
const MODES: PlanMode[] = ['custom', 'generic'];

/**
 * The most rows of `messages` a page statement answering `answered` rows may
 * read, however much its viewer hid: each row twice (a run is counted, then
 * read) and a few probes at the edges of the hidden ranges it crosses.
 */
const rowsBound = (answered: number) => 2 * answered + 20;
/** The most buffers: a few per row answered, for the index and heap pages under them. */
const buffersBound = (answered: number) => 4 * answered + 50;

describe.each(backends)("A viewer's pages cost what the page holds, whatever they hid (%s)", (backend) => {
  let harness: Harness;
  let db: SqlRunner;
  let alice: Client;
  let bob: Client;
  let conv: { id: string; uuid: string };
  const clock = (): RetentionClock => ({ server: harness.config.retention, now: new Date() });

  /**
   * The page statements a viewer's reads send, by name: the shortcut past
   * nearby hides, and the walk after it where the shortcut could not answer
   * (src/store/nearbyHides.ts), as bob's pages past his 19,900 cannot.
   */
  const pageStatements = async (viewerId: string) => {
    const reads = {
      newest: (runner: SqlRunner) => scanPage(runner, viewerId, clock(), conv.uuid, { direction: 'backward', size: PAGE, beforeSeq: null }),
      'before the newest': (runner: SqlRunner) =>
        scanPage(runner, viewerId, clock(), conv.uuid, { direction: 'backward', size: PAGE, beforeSeq: MESSAGE_COUNT }),
      'after the oldest 50': (runner: SqlRunner) => scanPage(runner, viewerId, clock(), conv.uuid, { direction: 'forward', size: PAGE, afterSeq: PAGE }),
      'around a hidden message': (runner: SqlRunner) => scanAround(runner, viewerId, clock(), conv.uuid, MESSAGE_COUNT / 2, PAGE, PAGE),
    };
    const named: Record<string, SQL> = {};
    for (const [name, read] of Object.entries(reads)) {
      const sent = await recordStatements(db, read);
      for (const [i, statement] of sent.entries()) named[i === 0 ? name : `${name}, then the walk`] = statement;
    }
    return named;
  };

  /** Every page statement's plan for `viewerId` in each mode, by "statement (mode)". */
  const plans = async (viewerId: string): Promise<Map<string, PlanNode>> => {
    const found = new Map<string, PlanNode>();
    for (const [name, statement] of Object.entries(await pageStatements(viewerId))) {
      for (const mode of MODES) found.set(`${name} (${mode})`, await explainPrepared(db, statement, mode));
    }
    return found;
  };

  /** What each plan read, by name: rows of messages and of hidden ranges, and buffers. */
  const costs = (found: Map<string, PlanNode>) =>
    Object.fromEntries(
      [...found].map(([name, plan]) => [
        name,
        { messages: rowsRead(plan, 'messages'), ranges: rowsRead(plan, 'message_hide_ranges'), buffers: buffersTouched(plan) },
      ]),
    );

  const expectBounded = (found: Map<string, PlanNode>) => {
    const figures = costs(found);
    for (const [name, plan] of found) {
      const detail = `${name}: ${JSON.stringify(figures)}\n${planShape(plan).join('\n')}`;
      const answered = plan['Actual Rows'];
      expect(figures[name]!.messages, detail).toBeLessThanOrEqual(rowsBound(answered));
      expect(figures[name]!.ranges, detail).toBeLessThanOrEqual(rowsBound(answered));
      expect(figures[name]!.buffers, detail).toBeLessThanOrEqual(buffersBound(answered));
    }
  };

  /**
   * How each plan reads `messages`, by name. The one-row tables (members,
   * conversations, bob's one range) may be scanned whole once analyzed,
   * which costs a buffer each; the table that grows must keep its seeks.
   */
  const messageScans = (found: Map<string, PlanNode>) =>
    new Map([...found].map(([name, plan]) => [name, planShape(plan).filter((line) => / on messages( |$)/.test(line))]));

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    conv = await createGroup(alice, ['bob', 'carol']);
    if (backend === 'postgres') {
      // This database is the test's own: no analyze may run behind its back.
      const tables = await db.rows<{ name: string }>(sql`select tablename as name from pg_tables where schemaname = 'public'`);
      for (const { name } of tables) await db.rows(sql`alter table ${sql.identifier(name)} set (autovacuum_enabled = off)`);
    }
    await seedMessages(harness, conv.uuid, 'alice', MESSAGE_COUNT);
    for (let top = MESSAGE_COUNT; top > MESSAGE_COUNT - HIDDEN; top -= HIDES_PER_CALL) {
      const keys = Array.from({ length: HIDES_PER_CALL }, (_, i) => ({ convId: conv.uuid, seq: top - i }));
      const outcome = await hideMessages(db, 'bob', clock(), keys);
      expect(outcome).toEqual({ kind: 'hidden', newlyHidden: HIDES_PER_CALL });
    }
  }, 300_000);
  afterAll(() => harness.close());

  it('shows bob the newest 50 he did not hide, with exact flags on both sides of what he hid', async () => {
    const seqs = (edges: Edge[]) => edges.map((e) => e.node.seq);
    const newest = (await bob.gql(MESSAGES, { id: conv.id, last: PAGE })).data.conversation.messages;
    expect(seqs(newest.edges)).toEqual(Array.from({ length: PAGE }, (_, i) => 51 + i));
    expect(newest.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    const beforeHidden = (await bob.gql(MESSAGES, { id: conv.id, last: 5, before: encodeCursor(conv.uuid, MESSAGE_COUNT) })).data.conversation
      .messages;
    expect(seqs(beforeHidden.edges)).toEqual([96, 97, 98, 99, 100]);
    expect(beforeHidden.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    const afterVisible = (await bob.gql(MESSAGES, { id: conv.id, first: 5, after: encodeCursor(conv.uuid, 98) })).data.conversation.messages;
    expect(seqs(afterVisible.edges)).toEqual([99, 100]);
    expect(afterVisible.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    const aliceNewest = (await alice.gql(MESSAGES, { id: conv.id, last: 3 })).data.conversation.messages;
    expect(seqs(aliceNewest.edges)).toEqual([19_998, 19_999, 20_000]);
  });

  it("reads as many rows for bob's pages as for alice's, on data never analyzed, custom and generic plans alike", async () => {
    const bobs = await plans('bob');
    const alices = await plans('alice');
    // Past 19,900 hidden the shortcut cannot answer, and every page of bob's is walked; alice's never are.
    const walked = (found: Map<string, PlanNode>) => [...found.keys()].filter((name) => name.includes('then the walk')).length;
    expect(walked(bobs), [...bobs.keys()].join(', ')).toBe(4 * MODES.length);
    expect(walked(alices), [...alices.keys()].join(', ')).toBe(0);
    expectBounded(bobs);
    expectBounded(alices);
  });

  it('reads messages the same way once statistics are fresh', async () => {
    const before = messageScans(await plans('bob'));
    await db.rows(sql`analyze`);
    const fresh = await plans('bob');
    expectBounded(fresh);
    expect(messageScans(fresh)).toEqual(before);
  });
});
