/**
 * The shortcut past nearby hides (src/store/nearbyHides.ts): for made-up
 * histories where bob hid scattered messages and runs of them and cleared
 * some, every keyset page and page around an anchor answers what a plain
 * filter of the stored messages answers, in one statement when the
 * shortcut could tell and in two (the walk after it) when it could not;
 * the run must take both routes, each many times. And the cases it is for:
 * a few scattered hides near a page cost one statement; one long hidden
 * range, or more ranges than it fetches before the page is full, send the
 * page to the walk.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import type { PageWindow } from '../../src/history/pageWindow.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import { hideMessages } from '../../src/store/hides.ts';
import { NEARBY_RANGES } from '../../src/store/nearbyHides.ts';
import { scanAround, scanPage } from '../../src/store/pages.ts';
import { backends } from '../helpers/database.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { recordStatements } from '../helpers/preparedPlans.ts';

const MESSAGES = 200;
const CLOCK = { server: KEEP_EVERYTHING, now: new Date() };

/** What bob did: the seqs he hid (in calls of up to 100) and the seq he cleared through. */
interface History {
  hidden: number[];
  clearedThrough: number;
}

const seq = fc.integer({ min: 1, max: MESSAGES });
/** Scattered seqs, and runs of consecutive ones as a client hides a selection. */
const scattered = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: seq.map((s) => [s]) },
      { weight: 1, arbitrary: fc.tuple(seq, fc.integer({ min: 2, max: 60 })).map(([from, n]) => Array.from({ length: n }, (_, i) => from + i)) },
    ),
    { maxLength: 40 },
  )
  .map((groups) => groups.flat());
/**
 * Every `stride`-th seq of a stretch: many short ranges close together, so
 * a page fills past more of them than the shortcut fetches, within its cap.
 */
const strided = fc
  .tuple(seq, seq, fc.integer({ min: 2, max: 4 }))
  .map(([a, b, stride]) => Array.from({ length: Math.floor(Math.abs(b - a) / stride) + 1 }, (_, i) => Math.min(a, b) + i * stride));
const hiddenSeqs = fc
  .tuple(scattered, fc.oneof(fc.constant([]), strided))
  .map(([some, more]) => [...new Set([...some, ...more].filter((s) => s <= MESSAGES))]);
const history: fc.Arbitrary<History> = fc.record({
  hidden: hiddenSeqs,
  clearedThrough: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: MESSAGES / 2 }) }),
});

describe.each(backends)('The shortcut past nearby hides (%s)', (backend) => {
  let harness: Harness;
  let db: SqlRunner;

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
  });
  afterAll(() => harness.close());

  /** A group of alice and bob with `MESSAGES` messages after bob's `history`; answers its id and the seqs bob can see. */
  const conversation = async ({ hidden, clearedThrough }: History) => {
    const convId = randomUUID();
    await db.transaction(async (tx) => {
      await tx.rows(sql`insert into conversations (id, kind, max_seq) values (${convId}, 'group', ${MESSAGES})`);
      await tx.rows(sql`insert into members (conv_id, user_id, role) values (${convId}, 'alice', 'owner'), (${convId}, 'bob', 'member')`);
      await tx.rows(sql`insert into messages (conv_id, seq, sender_id, client_msg_id)
        select ${convId}, g, 'alice', 'seed-' || g from generate_series(1, ${MESSAGES}) g`);
    });
    for (let i = 0; i < hidden.length; i += 100) {
      await hideMessages(db, 'bob', CLOCK, hidden.slice(i, i + 100).map((s) => ({ convId, seq: s })));
    }
    await db.rows(sql`update members set clear_seq = ${clearedThrough} where conv_id = ${convId} and user_id = 'bob'`);
    const gone = new Set(hidden);
    const visible = Array.from({ length: MESSAGES }, (_, i) => i + 1).filter((s) => s > clearedThrough && !gone.has(s));
    return { convId, visible };
  };

  /** Bob's page in `window`, and how many statements it took. */
  const page = async (convId: string, window: PageWindow) => {
    let answer: Awaited<ReturnType<typeof scanPage>> | undefined;
    const sent = await recordStatements(db, async (runner) => {
      answer = await scanPage(runner, 'bob', CLOCK, convId, window);
    });
    if (answer?.kind !== 'page') throw new Error('bob is a member');
    return { seqs: answer.scanned.map((r) => r.seq), behind: answer.behindExists, statements: sent.length };
  };

  /** Bob's page around `anchor`, and how many statements it took. */
  const around = async (convId: string, anchor: number, size: number) => {
    let answer: Awaited<ReturnType<typeof scanAround>> | undefined;
    const sent = await recordStatements(db, async (runner) => {
      answer = await scanAround(runner, 'bob', CLOCK, convId, anchor, size, size);
    });
    if (answer?.kind !== 'around') throw new Error('bob is a member');
    const seqs = { older: answer.older.map((r) => r.seq), anchor: answer.anchor?.seq ?? null, newer: answer.newer.map((r) => r.seq) };
    return { seqs, statements: sent.length };
  };

  it('answers what the rule filters, by the shortcut or the walk after it, and takes both routes', async () => {
    const routes = { shortcut: 0, walk: 0 };
    const count = (statements: number) => {
      expect(statements).toBeGreaterThanOrEqual(1);
      expect(statements).toBeLessThanOrEqual(2);
      routes[statements === 1 ? 'shortcut' : 'walk'] += 1;
    };
    await fc.assert(
      fc.asyncProperty(history, fc.integer({ min: 0, max: MESSAGES + 1 }), fc.integer({ min: 1, max: 30 }), async (told, cursor, size) => {
        const { convId, visible } = await conversation(told);
        const below = visible.filter((s) => s < cursor);
        const above = visible.filter((s) => s > cursor);

        const newest = await page(convId, { direction: 'backward', size, beforeSeq: null });
        expect({ seqs: newest.seqs, behind: newest.behind }).toEqual({ seqs: visible.slice(-(size + 1)).reverse(), behind: false });
        count(newest.statements);

        const backward = await page(convId, { direction: 'backward', size, beforeSeq: cursor });
        expect({ seqs: backward.seqs, behind: backward.behind }).toEqual({
          seqs: below.slice(-(size + 1)).reverse(),
          behind: visible.some((s) => s >= cursor),
        });
        count(backward.statements);

        const forward = await page(convId, { direction: 'forward', size, afterSeq: cursor });
        expect({ seqs: forward.seqs, behind: forward.behind }).toEqual({
          seqs: above.slice(0, size + 1),
          behind: visible.some((s) => s <= cursor),
        });
        count(forward.statements);

        const aroundCursor = await around(convId, cursor, size);
        expect(aroundCursor.seqs).toEqual({
          older: below.slice(-(size + 1)).reverse(),
          anchor: visible.includes(cursor) ? cursor : null,
          newer: above.slice(0, size + 1),
        });
        count(aroundCursor.statements);
      }),
      { numRuns: 40 },
    );
    // Both routes, each often enough that the property checked it.
    expect(routes.shortcut, JSON.stringify(routes)).toBeGreaterThanOrEqual(20);
    expect(routes.walk, JSON.stringify(routes)).toBeGreaterThanOrEqual(10);
  });

  it('reads a page past a few scattered hides in one statement', async () => {
    // Every tenth of the newest 100 hidden: 10 ranges of one seq, 5 within the newest page of 40.
    const hidden = Array.from({ length: 10 }, (_, i) => MESSAGES - 10 * i);
    const { convId, visible } = await conversation({ hidden, clearedThrough: 0 });
    const newest = await page(convId, { direction: 'backward', size: 40, beforeSeq: null });
    expect(newest).toEqual({ seqs: visible.slice(-41).reverse(), behind: false, statements: 1 });
    const deeper = await page(convId, { direction: 'backward', size: 20, beforeSeq: MESSAGES - 30 });
    expect(deeper.statements).toBe(1);
    expect(deeper.seqs).toEqual(visible.filter((s) => s < MESSAGES - 30).slice(-21).reverse());
  });

  it('hands the page to the walk past a long hidden range, or past more ranges than it fetched', async () => {
    // One range of 150: more hidden seqs than a page of 20 may skip.
    const long = await conversation({ hidden: Array.from({ length: 150 }, (_, i) => MESSAGES - i), clearedThrough: 0 });
    expect(await page(long.convId, { direction: 'backward', size: 20, beforeSeq: null })).toEqual({
      seqs: long.visible.slice(-21).reverse(),
      behind: false,
      statements: 2,
    });
    // Every other seq of the newest 40 hidden: more than NEARBY_RANGES ranges before a page of 30 is full.
    const scattered = await conversation({ hidden: Array.from({ length: 20 }, (_, i) => MESSAGES - 2 * i), clearedThrough: 0 });
    expect(NEARBY_RANGES).toBeLessThan(20);
    expect(await page(scattered.convId, { direction: 'backward', size: 30, beforeSeq: null })).toEqual({
      seqs: scattered.visible.slice(-31).reverse(),
      behind: false,
      statements: 2,
    });
  });
});
