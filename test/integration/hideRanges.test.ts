/**
 * "Deleted for me" as ranges: for made-up histories of hides (in batches,
 * repeats included), purges that leave gaps and history clears, the ranges
 * stay disjoint and cover exactly what was hidden, and every read path
 * (keyset pages both ways with their far-side flags, pages around an anchor,
 * the first message at a time, lookups by key) answers what a plain filter
 * of the stored messages by the rule answers.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunner, type SqlRunner } from '../../src/db/runner.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import { hideMessages } from '../../src/store/hides.ts';
import { findVisibleMessages } from '../../src/store/messages.ts';
import { findFirstVisibleAt, scanAround, scanPage } from '../../src/store/pages.ts';
import { backends, postgresOnly } from '../helpers/database.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

const MESSAGES = 40;
const CLOCK = { server: KEEP_EVERYTHING, now: new Date() };

/** One thing that happens to the conversation. */
type Step = { kind: 'hide'; seqs: number[] } | { kind: 'purge'; seqs: number[] } | { kind: 'clear'; throughSeq: number };

const seqs = fc.array(fc.integer({ min: 1, max: MESSAGES }), { minLength: 1, maxLength: 12 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: seqs.map((s) => ({ kind: 'hide' as const, seqs: s })) },
  // Runs of consecutive seqs too, as a client hides a selection.
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: MESSAGES }), fc.integer({ min: 1, max: 15 }))
      .map(([from, n]) => ({ kind: 'hide' as const, seqs: Array.from({ length: Math.min(n, MESSAGES - from + 1) }, (_, i) => from + i) })),
  },
  { weight: 2, arbitrary: seqs.map((s) => ({ kind: 'purge' as const, seqs: s })) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: MESSAGES / 2 }).map((throughSeq) => ({ kind: 'clear' as const, throughSeq })) },
);

describe.each(backends)('Hidden ranges (%s)', (backend) => {
  const itOnPostgres = postgresOnly(backend);
  let harness: Harness;
  let db: SqlRunner;

  beforeAll(async () => {
    harness = await startHarness(backend);
    db = createRunner(harness.database.client);
  });
  afterAll(() => harness.close());

  /** A group of alice and bob with `MESSAGES` messages; answers its id. */
  const conversation = async (): Promise<string> => {
    const convId = randomUUID();
    await db.transaction(async (tx) => {
      await tx.rows(sql`insert into conversations (id, kind, max_seq) values (${convId}, 'group', ${MESSAGES})`);
      await tx.rows(sql`insert into members (conv_id, user_id, role) values (${convId}, 'alice', 'owner'), (${convId}, 'bob', 'member')`);
      await tx.rows(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
        select ${convId}, g, 'alice', 'seed-' || g, timestamptz '2026-01-01T00:00:00Z' + g * interval '1 minute'
        from generate_series(1, ${MESSAGES}) g`);
    });
    return convId;
  };

  /** Plays `steps` for bob in `convId`; answers what a plain model says he sees: the stored seqs, his hides and his floor. */
  const play = async (convId: string, steps: Step[]) => {
    const stored = new Set(Array.from({ length: MESSAGES }, (_, i) => i + 1));
    const hidden = new Set<number>();
    let floor = 0;
    for (const s of steps) {
      if (s.kind === 'hide') {
        const readable = s.seqs.filter((seq) => stored.has(seq) && seq > floor);
        if (readable.length === 0) continue;
        const fresh = new Set(readable.filter((seq) => !hidden.has(seq)));
        const outcome = await hideMessages(db, 'bob', CLOCK, readable.map((seq) => ({ convId, seq })));
        expect(outcome).toEqual({ kind: 'hidden', newlyHidden: fresh.size });
        for (const seq of readable) hidden.add(seq);
      } else if (s.kind === 'purge') {
        await db.rows(sql`delete from messages where conv_id = ${convId} and seq = any(${sql.param(s.seqs)}::int8[])`);
        for (const seq of s.seqs) stored.delete(seq);
      } else {
        floor = Math.max(floor, s.throughSeq);
        await db.rows(sql`update members set clear_seq = ${floor} where conv_id = ${convId} and user_id = 'bob'`);
      }
    }
    const visible = [...stored].filter((seq) => seq > floor && !hidden.has(seq)).sort((a, b) => a - b);
    return { stored, hidden, visible, floor };
  };

  it('keeps ranges disjoint, covering exactly the messages hidden, merged across what lies between only when nothing does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 8 }), async (steps) => {
        const convId = await conversation();
        const { stored, hidden } = await play(convId, steps);
        const ranges = await db.rows<{ from_seq: number; to_seq: number }>(
          sql`select from_seq, to_seq from message_hide_ranges where conv_id = ${convId} and user_id = 'bob' order by from_seq`,
        );
        for (const [i, r] of ranges.entries()) {
          expect(r.from_seq).toBeLessThanOrEqual(r.to_seq);
          if (i === 0) continue;
          const before = ranges[i - 1]!;
          expect(r.from_seq).toBeGreaterThan(before.to_seq);
          // Merged whenever no message lay between (a purge after the hides may take it away since).
          const between = [...stored].some((seq) => seq > before.to_seq && seq < r.from_seq);
          if (!steps.some((s) => s.kind === 'purge')) expect(between, JSON.stringify(ranges)).toBe(true);
        }
        const covered = (seq: number) => ranges.some((r) => r.from_seq <= seq && seq <= r.to_seq);
        for (const seq of stored) expect(covered(seq), `seq ${seq}`).toBe(hidden.has(seq));
      }),
      { numRuns: 40 },
    );
  });

  itOnPostgres("merges one member's concurrent hides one after the other, into one range when they meet", async () => {
    const convId = await conversation();
    // Eight devices at once, each hiding every eighth message from a different start.
    const calls = Array.from({ length: 8 }, (_, lane) =>
      hideMessages(db, 'bob', CLOCK, Array.from({ length: MESSAGES / 8 }, (_, i) => ({ convId, seq: 1 + lane + 8 * i }))),
    );
    expect((await Promise.all(calls)).map((outcome) => outcome.kind === 'hidden' && outcome.newlyHidden)).toEqual(Array(8).fill(MESSAGES / 8));
    expect(await db.rows(sql`select from_seq, to_seq from message_hide_ranges where conv_id = ${convId} and user_id = 'bob'`)).toEqual([
      { from_seq: 1, to_seq: MESSAGES },
    ]);
  });

  it('answers every read path as the rule filters the stored messages, through gaps, clears and hides', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 8 }),
        fc.integer({ min: 0, max: MESSAGES + 1 }),
        fc.integer({ min: 1, max: 6 }),
        async (steps, cursor, size) => {
          const convId = await conversation();
          const { visible, floor } = await play(convId, steps);
          const page = async (window: Parameters<typeof scanPage>[4]) => {
            const scanned = await scanPage(db, 'bob', CLOCK, convId, window);
            if (scanned.kind !== 'page') throw new Error('bob is a member');
            return { seqs: scanned.scanned.map((r) => r.seq), behind: scanned.behindExists };
          };
          const below = visible.filter((seq) => seq < cursor);
          const above = visible.filter((seq) => seq > cursor);
          expect(await page({ direction: 'backward', size, beforeSeq: null })).toEqual({
            seqs: visible.slice(-(size + 1)).reverse(),
            behind: false,
          });
          expect(await page({ direction: 'backward', size, beforeSeq: cursor })).toEqual({
            seqs: below.slice(-(size + 1)).reverse(),
            behind: visible.some((seq) => seq >= cursor),
          });
          expect(await page({ direction: 'forward', size, afterSeq: cursor })).toEqual({
            seqs: above.slice(0, size + 1),
            behind: visible.some((seq) => seq <= cursor),
          });
          // Just above the floor, where a walk down must stop.
          for (const edge of [floor + 1, floor + 2]) {
            expect(await page({ direction: 'backward', size, beforeSeq: edge })).toEqual({
              seqs: visible.filter((seq) => seq < edge).slice(-(size + 1)).reverse(),
              behind: visible.some((seq) => seq >= edge),
            });
          }
          const around = await scanAround(db, 'bob', CLOCK, convId, cursor, size, size);
          if (around.kind !== 'around') throw new Error('bob is a member');
          expect({ older: around.older.map((r) => r.seq), anchor: around.anchor?.seq ?? null, newer: around.newer.map((r) => r.seq) }).toEqual({
            older: below.slice(-(size + 1)).reverse(),
            anchor: visible.includes(cursor) ? cursor : null,
            newer: above.slice(0, size + 1),
          });
          // Message g was created g minutes into 2026.
          const at = new Date(Date.UTC(2026, 0, 1, 0, cursor)).toISOString();
          expect(await findFirstVisibleAt(db, 'bob', CLOCK, convId, at)).toMatchObject({ seq: visible.find((seq) => seq >= cursor) ?? null });
          const keys = Array.from({ length: MESSAGES }, (_, i) => ({ convId, seq: i + 1 }));
          const found = await findVisibleMessages(db, 'bob', CLOCK, keys);
          expect(found.flatMap((row) => (row === null ? [] : [row.seq]))).toEqual(visible);
        },
      ),
      { numRuns: 40 },
    );
  });
});
