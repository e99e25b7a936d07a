/**
 * Read receipts (`Message.readCount`): exact counts, as the definition says
 * (members other than the sender whose read cursor is at or past the
 * message), and a cost that does not grow with members x messages. A
 * message page (or a thread's replies) that asks for them has its
 * statement count them (src/store/pageReceipts.ts): one statement, the
 * same rows.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { createRunner } from '../../src/db/runner.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import type { PageWindow } from '../../src/history/pageWindow.ts';
import { countReaders } from '../../src/store/inbox.ts';
import { type MessageKey, messageKeyString } from '../../src/store/messages.ts';
import { scanAround, scanPage } from '../../src/store/pages.ts';
import { scanThread } from '../../src/store/threads.ts';
import { backends } from '../helpers/database.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { type LargeGroup, seedLargeGroup } from '../helpers/largeGroup.ts';
import { recordingRunner, statementCost } from '../helpers/statementCost.ts';

const PAGE_WITH_RECEIPTS = `query ($id: ID!, $last: Int) { conversation(id: $id) { messages(last: $last) { edges { node { seq readCount } } } } }`;

const clock = () => ({ server: KEEP_EVERYTHING, now: new Date() });

const MEMBERS = 10_000;
const MESSAGES = 200;

/** Keys `from`..`to` of conversation `convId`. */
const keysOf = (convId: string, from: number, to: number): MessageKey[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ convId, seq: from + i }));

/** One made-up group: each member's read position, and each message's sender (an index past the members: someone who left). */
interface MadeUpGroup {
  readSeqs: number[];
  senders: number[];
}

const madeUpGroup: fc.Arbitrary<MadeUpGroup> = fc
  .record({
    readSeqs: fc.array(fc.nat({ max: 40 }), { minLength: 1, maxLength: 25 }),
    senders: fc.array(fc.nat({ max: 30 }), { minLength: 0, maxLength: 40 }),
  })
  // A read cursor never passes the newest message; most senders are members, a few have left.
  .map(({ readSeqs, senders }) => ({
    readSeqs: readSeqs.map((seq) => seq % (senders.length + 1)),
    senders: senders.map((k) => k % (readSeqs.length + 2)),
  }));

describe.each(backends)('Read receipts (%s)', (backend) => {
  let harness: Harness;
  let group: LargeGroup;

  beforeAll(async () => {
    harness = await startHarness(backend);
    group = await seedLargeGroup(harness.database, MEMBERS, MESSAGES);
  });
  afterAll(() => harness.close());

  /** The receipts of `keys` by the definition, written as the plain join it is (the statement before the histogram). */
  const byDefinition = async (keys: MessageKey[]): Promise<number[]> => {
    const rows = rowsOf<{ conv_id: string; seq: number; readers: number }>(
      await harness.database.db.execute(sql`select k.conv_id, k.seq, count(r.user_id)::int8 as readers
        from (select distinct * from unnest(${sql.param(keys.map((k) => k.convId))}::uuid[], ${sql.param(keys.map((k) => k.seq))}::int8[])) as k(conv_id, seq)
        join messages m on m.conv_id = k.conv_id and m.seq = k.seq
        left join members r on r.conv_id = k.conv_id and r.user_id <> m.sender_id and r.read_seq >= k.seq
        group by k.conv_id, k.seq`),
    );
    const readers = new Map(rows.map((row) => [messageKeyString({ convId: row.conv_id, seq: row.seq }), row.readers]));
    return keys.map((key) => readers.get(messageKeyString(key)) ?? 0);
  };

  /** How many members of the large group have read at or past `seq`. */
  const readersAtOrPast = async (seq: number): Promise<number> => {
    const [row] = rowsOf<{ n: number }>(
      await harness.database.db.execute(sql`select count(*)::int8 as n from members where conv_id = ${group.uuid} and read_seq >= ${seq}`),
    );
    return row!.n;
  };

  /** Member `k` of the made-up group `uuid` (past its members: someone who left). */
  const user = (uuid: string, k: number) => `${uuid.slice(0, 8)}-${k}`;

  /** Inserts `made`'s group, set-based; answers its uuid. */
  const insertGroup = async (made: MadeUpGroup): Promise<string> => {
    const uuid = randomUUID();
    await harness.database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into conversations (id, kind, max_seq) values (${uuid}, 'group', ${made.senders.length})`);
      await tx.execute(sql`insert into members (conv_id, user_id, read_seq)
        select ${uuid}::uuid, u.user_id, u.read_seq
        from unnest(${sql.param(made.readSeqs.map((_, k) => user(uuid, k)))}::text[], ${sql.param(made.readSeqs)}::int8[]) as u(user_id, read_seq)`);
      await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id)
        select ${uuid}::uuid, s.seq, s.sender_id, 'made-' || s.seq
        from unnest(${sql.param(made.senders.map((k) => user(uuid, k)))}::text[]) with ordinality as s(sender_id, seq)`);
    });
    return uuid;
  };

  it('counts exactly what the definition counts, for made-up groups and batches across them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(madeUpGroup, { minLength: 1, maxLength: 3 }),
        // Each key: a group (modulo how many there are) and a seq, some past the newest (no message: 0).
        fc.array(fc.tuple(fc.nat(), fc.nat({ max: 45 })), { minLength: 1, maxLength: 60 }),
        async (groups, picks) => {
          const uuids: string[] = [];
          for (const made of groups) uuids.push(await insertGroup(made));
          const keys = picks.map(([g, seq]) => ({ convId: uuids[g % uuids.length]!, seq }));
          expect(await countReaders(recordingRunner(harness.database).runner, keys)).toEqual(await byDefinition(keys));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('counts in the page statement exactly what the definition counts, on every kind of page, its rows unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        madeUpGroup,
        fc.nat({ max: 45 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom('newest', 'backward', 'forward', 'around'),
        async (made, cursor, size, kind) => {
          const uuid = await insertGroup(made);
          // A member who reads: every made-up group has member 0.
          const viewerId = user(uuid, 0);
          const scan = (receipts: boolean) => {
            if (kind === 'around') return scanAround(createRunner(harness.database.client), viewerId, clock(), uuid, cursor, size, size, receipts);
            const window: PageWindow =
              kind === 'forward'
                ? { direction: 'forward', size, afterSeq: cursor }
                : { direction: 'backward', size, beforeSeq: kind === 'newest' ? null : cursor };
            return scanPage(createRunner(harness.database.client), viewerId, clock(), uuid, window, receipts);
          };
          const [counted, plain] = [await scan(true), await scan(false)];
          if (counted.kind === 'not-found' || plain.kind === 'not-found') throw new Error('member 0 is a member');
          const { readCounts, ...page } = counted;
          const { readCounts: none, ...plainPage } = plain;
          expect(page).toEqual(plainPage);
          expect(none.size).toBe(0);
          const rows = counted.kind === 'page' ? counted.scanned : [...counted.older, ...(counted.anchor ? [counted.anchor] : []), ...counted.newer];
          const keys = rows.map((row) => ({ convId: uuid, seq: row.seq }));
          expect([...readCounts.keys()].sort((a, b) => a - b)).toEqual(keys.map((k) => k.seq).sort((a, b) => a - b));
          expect(keys.map((k) => readCounts.get(k.seq))).toEqual(await byDefinition(keys));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('counts in the thread statement exactly what the definition counts, in every direction, its rows unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        madeUpGroup,
        fc.nat({ max: 45 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom('newest', 'backward', 'forward'),
        async (made, cursor, size, kind) => {
          const uuid = await insertGroup(made);
          // Every even message past the first replies to it: its thread holds about half the group's messages.
          await harness.database.db.execute(sql`update messages set reply_to_seq = 1, thread_root_seq = 1 where conv_id = ${uuid} and seq > 1 and seq % 2 = 0`);
          const window: PageWindow =
            kind === 'forward' ? { direction: 'forward', size, afterSeq: cursor } : { direction: 'backward', size, beforeSeq: kind === 'newest' ? null : cursor };
          const scan = (receipts: boolean) => scanThread(createRunner(harness.database.client), user(uuid, 0), clock(), uuid, 1, window, receipts);
          const [counted, plain] = [await scan(true), await scan(false)];
          if (counted.kind === 'not-found' || plain.kind === 'not-found') throw new Error('member 0 is a member');
          const { readCounts, ...thread } = counted;
          const { readCounts: none, ...plainThread } = plain;
          expect(thread).toEqual(plainThread);
          expect(none.size).toBe(0);
          expect(counted.scanned.every((row) => row.seq % 2 === 0)).toBe(true);
          const keys = counted.scanned.map((row) => ({ convId: uuid, seq: row.seq }));
          expect([...readCounts.keys()].sort((a, b) => a - b)).toEqual(keys.map((k) => k.seq).sort((a, b) => a - b));
          expect(keys.map((k) => readCounts.get(k.seq))).toEqual(await byDefinition(keys));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("counts the receipts of a thread's replies in the thread's own statement, the same counts a batch would load", async () => {
    // Replies to message 150 of the large group: 153, 156, ..., 198.
    await harness.database.db.execute(
      sql`update messages set reply_to_seq = 150, thread_root_seq = 150 where conv_id = ${group.uuid} and seq > 150 and seq % 3 = 0`,
    );
    const viewer = await harness.client(group.userId(6));
    const root = messageGlobalId(group.uuid, 150);
    const asked = await viewer.gql(`query ($m: ID!) { message(id: $m) { replies(last: 10) { edges { node { seq readCount } } } } }`, { m: root });
    // A directive leaves the thread unsure of what its edges ask for: they load the counts in one batch.
    const unsure = await viewer.gql(`query ($m: ID!, $r: Boolean!) { message(id: $m) { replies(last: 10) { edges { node { seq readCount @include(if: $r) } } } } }`, {
      m: root,
      r: true,
    });
    expect(asked.errors).toBeUndefined();
    expect(unsure.errors).toBeUndefined();
    type Edge = { node: { seq: number; readCount: number } };
    const seqs = Array.from({ length: 10 }, (_, i) => 171 + 3 * i);
    const expected = await byDefinition(seqs.map((seq) => ({ convId: group.uuid, seq })));
    expect(asked.data.message.replies.edges.map((e: Edge) => e.node.seq)).toEqual(seqs);
    expect(asked.data.message.replies.edges.map((e: Edge) => e.node.readCount)).toEqual(expected);
    expect(unsure.data.message.replies.edges.map((e: Edge) => e.node.readCount)).toEqual(expected);
    expect(asked.stats.batches.filter((batch: { loader: string }) => batch.loader === 'readCount')).toEqual([]);
    expect(unsure.stats.batches.filter((batch: { loader: string }) => batch.loader === 'readCount')).toEqual([{ loader: 'readCount', size: 10 }]);
    expect(asked.stats.statements).toBe(unsure.stats.statements - 1);
  });

  it('answers a page of 50 with readCount in a group of 10,000 with its one page statement, its counts exact', async () => {
    const viewer = await harness.client(group.userId(3));
    const response = await viewer.gql(PAGE_WITH_RECEIPTS, { id: group.id, last: 50 });
    expect(response.errors).toBeUndefined();
    const counts = response.data.conversation.messages.edges.map((e: { node: { readCount: number } }) => e.node.readCount);
    expect(counts).toEqual(await byDefinition(keysOf(group.uuid, MESSAGES - 49, MESSAGES)));
    expect(response.stats.statements).toBe(1);
    expect(response.stats.batches).toEqual([]);
  });

  it.each([
    ['messages(last:, before:)', `query ($id: ID!, $cursor: String) { conversation(id: $id) { messages(last: 30, before: $cursor) { edges { node { seq readCount } } } } }`, 'before'],
    ['messages(first:, after:)', `query ($id: ID!, $cursor: String) { conversation(id: $id) { messages(first: 30, after: $cursor) { edges { node { seq readCount } } } } }`, 'after'],
    ['messagesAround', `query ($id: ID!, $anchor: ID!) { conversation(id: $id) { messagesAround(messageId: $anchor, before: 15, after: 14) { edges { node { seq readCount } } } } }`, 'around'],
  ])('counts the receipts of %s in its one page statement', async (_label, query, from) => {
    const viewer = await harness.client(group.userId(4));
    // A cursor (or anchor) 100 messages down, from the newest page's edges.
    const newest = await viewer.gql(`query ($id: ID!) { conversation(id: $id) { messages(last: 100) { edges { cursor node { id seq } } } } }`, { id: group.id });
    const edge = newest.data.conversation.messages.edges[0] as { cursor: string; node: { id: string; seq: number } };
    const response = await viewer.gql(query, { id: group.id, cursor: edge.cursor, anchor: edge.node.id });
    expect(response.errors).toBeUndefined();
    const edges = response.data.conversation[from === 'around' ? 'messagesAround' : 'messages'].edges as { node: { seq: number; readCount: number } }[];
    const expectedSeqs = from === 'before' ? [edge.node.seq - 30, edge.node.seq - 1] : from === 'after' ? [edge.node.seq + 1, edge.node.seq + 30] : [edge.node.seq - 15, edge.node.seq + 14];
    expect(edges.map((e) => e.node.seq)).toEqual(keysOf(group.uuid, expectedSeqs[0]!, expectedSeqs[1]!).map((k) => k.seq));
    expect(edges.map((e) => e.node.readCount)).toEqual(await byDefinition(edges.map((e) => ({ convId: group.uuid, seq: e.node.seq }))));
    expect(response.stats.statements).toBe(1);
    expect(response.stats.batches).toEqual([]);
  });

  it.each([
    ['asked directly', PAGE_WITH_RECEIPTS, {}, []],
    ['through fragments', `query ($id: ID!, $last: Int) { conversation(id: $id) { messages(last: $last) { edges { ...E } } } }
      fragment E on MessageEdge { node { seq ... on Message { readCount } } }`, {}, []],
    // A directive leaves the page unsure of what its edges ask for: the edges load them, in one batch.
    ['under a directive', `query ($id: ID!, $last: Int, $r: Boolean!) { conversation(id: $id) { messages(last: $last) { edges { node { seq readCount @include(if: $r) } } } } }`, { r: true }, [{ loader: 'readCount', size: 30 }]],
  ])('answers the same exact counts however readCount is asked for: %s', async (_label, query, variables, batches) => {
    const viewer = await harness.client(group.userId(5));
    const response = await viewer.gql(query, { id: group.id, last: 30, ...variables });
    expect(response.errors).toBeUndefined();
    const counts = response.data.conversation.messages.edges.map((e: { node: { readCount: number } }) => e.node.readCount);
    expect(counts).toEqual(await byDefinition(keysOf(group.uuid, MESSAGES - 29, MESSAGES)));
    expect(response.stats.batches).toEqual(batches);
  });

  it.each([
    ['the newest page', null],
    ['a page deep in the history', 101],
  ])('counts the receipts of %s by reading the members who have read at or past it once, not once per message', async (_label, beforeSeq) => {
    const window: PageWindow = { direction: 'backward', size: 50, beforeSeq };
    const costOf = async (receipts: boolean) => {
      const { runner, sent } = recordingRunner(harness.database);
      const scanned = await scanPage(runner, group.userId(6), clock(), group.uuid, window, receipts);
      if (scanned.kind === 'not-found') throw new Error('a member');
      expect(sent).toHaveLength(1);
      return { scanned, cost: await statementCost(harness.database, sent[0]!) };
    };
    const [plain, counted] = [await costOf(false), await costOf(true)];
    const seqs = plain.scanned.scanned.map((row) => row.seq);
    expect(counted.scanned.scanned.map((row) => row.seq)).toEqual(seqs);
    // The histogram's range from the page's lowest seq, then one probe per row for its sender.
    const histogram = await readersAtOrPast(Math.min(...seqs));
    const extra = (counted.cost.rowsVisited.members ?? 0) - (plain.cost.rowsVisited.members ?? 0);
    expect(extra, JSON.stringify(counted.cost.plan)).toBeLessThanOrEqual(histogram + seqs.length);
    expect(counted.cost.buffers - plain.cost.buffers, JSON.stringify(counted.cost.plan)).toBeLessThanOrEqual(Math.ceil(histogram / 400) + 8 * seqs.length + 20);
  });

  it.each([
    ['the newest page', MESSAGES - 49, MESSAGES],
    ['a page deep in the history', 51, 100],
  ])('reads the members who have read at or past %s once, not once per message', async (_label, from, to) => {
    const keys = keysOf(group.uuid, from, to);
    const { runner, sent } = recordingRunner(harness.database);
    expect(await countReaders(runner, keys)).toEqual(await byDefinition(keys));
    expect(sent).toHaveLength(1);
    const cost = await statementCost(harness.database, sent[0]!);
    // The histogram's range, then one probe per key for its sender (the old join read 10,000 rows per key).
    const histogram = await readersAtOrPast(from);
    expect(cost.rowsVisited.members, JSON.stringify(cost.plan)).toBeLessThanOrEqual(histogram + keys.length);
    // Index pages for the range (about 400 entries each), and at most a few buffers per probe.
    expect(cost.buffers, JSON.stringify(cost.plan)).toBeLessThanOrEqual(Math.ceil(histogram / 400) + 8 * keys.length + 20);
  });
});
