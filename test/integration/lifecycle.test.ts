/**
 * The message lifecycle through the API: retention applied on every read
 * path before any purge, group retention policies, purging and erasing for
 * everyone, honest gaps, the change feed seen from two devices, and jumping
 * to a date.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { encodeCursor } from '../../src/history/cursor.ts';
import { messageGlobalId } from '../../src/history/globalId.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';

const DAY_MS = 86_400_000;

const PAGE = `query ($id: ID!, $last: Int, $before: String, $first: Int, $after: String) {
  conversation(id: $id) {
    messages(last: $last, before: $before, first: $first, after: $after) {
      edges { node { seq content { __typename ... on TextContent { text } ... on PurgedContent { purgedAt } } } }
      pageInfo { hasPreviousPage hasNextPage startCursor endCursor }
      startSeq endSeq gaps { from to } latestSeq changesCursor
    }
  }
}`;
const MESSAGE = `query ($id: ID!) { message(id: $id) { seq } }`;
const NODE = `query ($id: ID!) { node(id: $id) { id } }`;
const AROUND = `query ($id: ID!, $m: ID!) { conversation(id: $id) { messagesAround(messageId: $m, before: 2, after: 2) { edges { node { seq } } anchorFound startSeq endSeq gaps { from to } } } }`;
const AT = `query ($id: ID!, $time: DateTime!, $before: Int, $after: Int) {
  conversation(id: $id) { messagesAt(time: $time, before: $before, after: $after) { edges { node { seq } } anchorFound pageInfo { hasPreviousPage hasNextPage } } }
}`;
const POLICY = `query ($id: ID!) { conversation(id: $id) { retentionPolicy { days maxMessages expiredThroughSeq } } }`;
const SET_POLICY = `mutation ($id: ID!, $days: Int, $max: Int) {
  setRetentionPolicy(input: { conversationId: $id, days: $days, maxMessages: $max }) { conversation { retentionPolicy { days maxMessages expiredThroughSeq } } }
}`;
const PURGE = `mutation ($ids: [ID!]!) { purgeMessages(input: { messageIds: $ids }) { purgedCount } }`;
const ERASE = `mutation ($user: ID!) { eraseUser(input: { userId: $user }) { erasedCount } }`;
const CLEAR = `mutation ($id: ID!) { clearHistory(input: { conversationId: $id }) { clearedThroughSeq } }`;
const CHANGES = `query ($id: ID!, $after: String, $first: Int) {
  conversation(id: $id) { changes(after: $after, first: $first) { changes { kind fromSeq toSeq user { id } at } cursor hasMore goneThroughSeq } }
}`;

interface Page {
  edges: { node: { seq: number; content: { __typename: string; text?: string } } }[];
  pageInfo: { hasPreviousPage: boolean; hasNextPage: boolean; startCursor: string | null; endCursor: string | null };
  startSeq: number | null;
  endSeq: number | null;
  gaps: { from: number; to: number }[];
  latestSeq: number;
  changesCursor: string;
}

describe.each(backends)('Message lifecycle (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let admin: Client;

  /**
   * A group owned by alice (bob and carol members) with `ages.length`
   * messages from bob, message i created `ages[i]` ms ago, oldest first.
   */
  const groupWithAges = async (ages: number[]) => {
    const group = await createGroup(alice, ['bob', 'carol']);
    const now = Date.now();
    await harness.database.db.transaction(async (tx) => {
      for (const [i, age] of ages.entries()) {
        const seq = i + 1;
        const at = new Date(now - age).toISOString();
        await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at) values (${group.uuid}, ${seq}, 'bob', ${`m${seq}`}, ${at}::timestamptz)`);
        await tx.execute(sql`insert into message_bodies (conv_id, seq, text) values (${group.uuid}, ${seq}, ${`message ${seq}`})`);
      }
      await tx.execute(sql`update conversations set max_seq = ${ages.length}, last_activity_at = now() where id = ${group.uuid}`);
    });
    return group;
  };
  const page = async (client: Client, id: string, args: Record<string, unknown> = {}): Promise<Page> => {
    const response = await client.gql(PAGE, { id, ...args });
    expect(response.errors).toBeUndefined();
    return response.data.conversation.messages;
  };
  const seqsOf = (p: Page) => p.edges.map((e) => e.node.seq);
  const idOf = (group: { uuid: string }, seq: number) => messageGlobalId(group.uuid, seq);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    admin = await harness.client('moderator', { roles: ['admin'] });
  });
  afterAll(() => harness.close());

  describe('retention by days', () => {
    // Seqs 1-4 are 10 days old, 5-8 one hour old.
    let group: Awaited<ReturnType<typeof groupWithAges>>;
    beforeAll(async () => {
      group = await groupWithAges([...Array(4).fill(10 * DAY_MS), ...Array(4).fill(3_600_000)]);
      const set = await alice.gql(SET_POLICY, { id: group.id, days: 7 });
      expect(set.data.setRetentionPolicy.conversation.retentionPolicy).toEqual({ days: 7, maxMessages: null, expiredThroughSeq: 4 });
    });

    it('serves no expired message on pages, and reports them as gaps with exact flags', async () => {
      const newest = await page(carol, group.id, { last: 20 });
      expect(seqsOf(newest)).toEqual([5, 6, 7, 8]);
      expect(newest.pageInfo.hasPreviousPage).toBe(false);
      expect({ startSeq: newest.startSeq, endSeq: newest.endSeq, gaps: newest.gaps }).toEqual({ startSeq: 1, endSeq: 8, gaps: [{ from: 1, to: 4 }] });
      const older = await page(carol, group.id, { last: 20, before: encodeCursor(group.uuid, 5) });
      expect(seqsOf(older)).toEqual([]);
    });

    it('answers NOT_FOUND for an expired message through message, node, jumps and mutations', async () => {
      for (const query of [MESSAGE, NODE]) expect(codes(await carol.gql(query, { id: idOf(group, 2) }))).toEqual(['NOT_FOUND']);
      const around = await carol.gql(AROUND, { id: group.id, m: idOf(group, 2) });
      expect(around.data.conversation.messagesAround).toMatchObject({ edges: [{ node: { seq: 5 } }, { node: { seq: 6 } }], anchorFound: false });
      expect(codes(await carol.gql(DELETE_FOR_ME, { messageIds: [idOf(group, 2)] }))).toEqual(['NOT_FOUND']);
      expect(codes(await alice.gql(REVOKE, { messageId: idOf(group, 2) }))).toEqual(['NOT_FOUND']);
    });

    it('keeps the expired rows until the purge: reads hide them, nothing deleted them', async () => {
      const [stored] = rowsOf<{ n: number }>(await harness.database.db.execute(sql`select count(*)::int as n from messages where conv_id = ${group.uuid}`));
      expect(stored!.n).toBe(8);
    });

    it('keeps the cut-off where it was once the purge has deleted the expired messages', async () => {
      // What the purge does to this conversation: the expired rows go.
      await harness.database.db.execute(sql`delete from message_bodies where conv_id = ${group.uuid} and seq <= 4`);
      await harness.database.db.execute(sql`delete from messages where conv_id = ${group.uuid} and seq <= 4`);
      expect((await carol.gql(POLICY, { id: group.id })).data.conversation.retentionPolicy.expiredThroughSeq).toBe(4);
      const changes = (await carol.gql(CHANGES, { id: group.id })).data.conversation.changes;
      expect(changes.goneThroughSeq).toBe(4);
      expect((await page(carol, group.id, { last: 20 })).gaps).toEqual([{ from: 1, to: 4 }]);
    });
  });

  describe('retention policies', () => {
    it('lets only the owner set one, refuses non-positive values, and may not lengthen the server limit', async () => {
      const group = await createGroup(alice, ['bob']);
      expect(codes(await bob.gql(SET_POLICY, { id: group.id, days: 3 }))).toEqual(['FORBIDDEN']);
      expect(codes(await carol.gql(SET_POLICY, { id: group.id, days: 3 }))).toEqual(['NOT_FOUND']);
      for (const bad of [{ days: 0 }, { days: -1 }, { max: 0 }]) {
        const response = await alice.gql(SET_POLICY, { id: group.id, ...bad });
        expect(codes(response)).toEqual(['BAD_USER_INPUT']);
      }
      const limited = await startHarness(backend, { RETENTION_MAX_MESSAGES: '10' });
      try {
        const owner = await limited.client('alice');
        const limitedGroup = await createGroup(owner, ['bob']);
        const longer = await owner.gql(SET_POLICY, { id: limitedGroup.id, max: 11 });
        expect(longer.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName: 'maxMessages' });
        const shorter = await owner.gql(SET_POLICY, { id: limitedGroup.id, max: 5 });
        expect(shorter.data.setRetentionPolicy.conversation.retentionPolicy).toEqual({ days: null, maxMessages: 5, expiredThroughSeq: 0 });
      } finally {
        await limited.close();
      }
    });

    it('keeps only the newest maxMessages seqs, moving the cut-off as messages arrive', async () => {
      const group = await groupWithAges(Array(10).fill(60_000));
      await alice.gql(SET_POLICY, { id: group.id, max: 6 });
      expect(seqsOf(await page(bob, group.id, { last: 20 }))).toEqual(range(5, 10));
      await send(bob, group.id, 'eleventh');
      expect(seqsOf(await page(bob, group.id, { last: 20 }))).toEqual(range(6, 11));
      expect((await bob.gql(POLICY, { id: group.id })).data.conversation.retentionPolicy).toEqual({ days: null, maxMessages: 6, expiredThroughSeq: 5 });
    });

    it('applies the server default to every conversation', async () => {
      const limited = await startHarness(backend, { RETENTION_MAX_MESSAGES: '3' });
      try {
        const owner = await limited.client('alice');
        const group = await createGroup(owner, []);
        for (const text of ['a', 'b', 'c', 'd', 'e']) await send(owner, group.id, text);
        const newest = (await owner.gql(PAGE, { id: group.id, last: 10 })).data.conversation.messages as Page;
        expect(seqsOf(newest)).toEqual([3, 4, 5]);
        expect(newest.gaps).toEqual([{ from: 1, to: 2 }]);
      } finally {
        await limited.close();
      }
    });
  });

  describe('purgeMessages', () => {
    it('removes messages for everyone, index and body, leaving gaps that a hide over them does not change', async () => {
      const group = await groupWithAges(Array(6).fill(60_000));
      await carol.gql(DELETE_FOR_ME, { messageIds: [idOf(group, 3)] });
      const purged = await alice.gql(PURGE, { ids: [idOf(group, 3), idOf(group, 4)] });
      expect(purged.data).toEqual({ purgeMessages: { purgedCount: 2 } });
      const seen = await page(bob, group.id, { last: 20 });
      expect(seqsOf(seen)).toEqual([1, 2, 5, 6]);
      expect(seen.gaps).toEqual([{ from: 3, to: 4 }]);
      const left = rowsOf<{ t: string; n: number }>(
        await harness.database.db.execute(sql`select 'messages' as t, count(*)::int as n from messages where conv_id = ${group.uuid} and seq in (3, 4)
          union all select 'bodies', count(*)::int from message_bodies where conv_id = ${group.uuid} and seq in (3, 4)
          union all select 'hides', count(*)::int from message_hide_ranges where conv_id = ${group.uuid}`),
      );
      // Carol's hide of 3 stays, over a gap: it hides nothing, and goes with the retention purge.
      expect(left).toEqual([{ t: 'messages', n: 0 }, { t: 'bodies', n: 0 }, { t: 'hides', n: 1 }]);
      expect(seqsOf(await page(carol, group.id, { last: 20 }))).toEqual([1, 2, 5, 6]);
    });

    it('refuses a member who does not own the group, all or nothing, and lets an admin purge anywhere', async () => {
      const group = await groupWithAges(Array(3).fill(60_000));
      expect(codes(await bob.gql(PURGE, { ids: [idOf(group, 1)] }))).toEqual(['FORBIDDEN']);
      // One unreadable id: nothing is purged.
      expect(codes(await alice.gql(PURGE, { ids: [idOf(group, 1), idOf(group, 99)] }))).toEqual(['NOT_FOUND']);
      expect(seqsOf(await page(bob, group.id))).toEqual([1, 2, 3]);
      expect((await admin.gql(PURGE, { ids: [idOf(group, 2)] })).data).toEqual({ purgeMessages: { purgedCount: 1 } });
      expect(seqsOf(await page(bob, group.id))).toEqual([1, 3]);
    });
  });

  describe('eraseUser', () => {
    it('replaces every text the user sent with PurgedContent, keeping seqs dense, for admins only', async () => {
      const group = await createGroup(alice, ['bob', 'dave']);
      const dave = await harness.client('dave');
      await send(alice, group.id, 'from alice');
      await send(dave, group.id, 'from dave, to be forgotten');
      await send(alice, group.id, 'alice again');
      expect(codes(await alice.gql(ERASE, { user: 'dave' }))).toEqual(['FORBIDDEN']);
      expect((await admin.gql(ERASE, { user: 'dave' })).data).toEqual({ eraseUser: { erasedCount: 1 } });
      const seen = await page(bob, group.id);
      expect(seen.edges.map((e) => [e.node.seq, e.node.content.__typename, e.node.content.text ?? null])).toEqual([
        [1, 'TextContent', 'from alice'],
        [2, 'PurgedContent', null],
        [3, 'TextContent', 'alice again'],
      ]);
      expect(seen.gaps).toEqual([]);
      const bodies = rowsOf<{ text: string }>(await harness.database.db.execute(sql`select text from message_bodies where conv_id = ${group.uuid}`));
      expect(bodies.map((b) => b.text)).not.toContain('from dave, to be forgotten');
    });
  });

  describe('the change feed', () => {
    it('tells a second device of alice what changed since its page: her hide, a revoke, a purge, in order', async () => {
      const group = await groupWithAges(Array(8).fill(60_000));
      const laptop = alice;
      const phone = await harness.client('alice');
      const loaded = await page(laptop, group.id);
      // Meanwhile: on her phone alice hides 2; bob's message 3 is revoked by alice (owner); 5 and 6 are purged.
      await phone.gql(DELETE_FOR_ME, { messageIds: [idOf(group, 2)] });
      expect((await alice.gql(REVOKE, { messageId: idOf(group, 3) })).errors).toBeUndefined();
      await alice.gql(PURGE, { ids: [idOf(group, 5), idOf(group, 6)] });
      const changes = (await laptop.gql(CHANGES, { id: group.id, after: loaded.changesCursor })).data.conversation.changes;
      expect(changes.changes.map((c: { kind: string; fromSeq: number; toSeq: number }) => [c.kind, c.fromSeq, c.toSeq])).toEqual([
        ['HIDDEN', 2, 2],
        ['REVOKED', 3, 3],
        ['PURGED', 5, 6],
      ]);
      expect(changes.hasMore).toBe(false);
      // Nothing new since: an empty page with a cursor that still works.
      const again = (await laptop.gql(CHANGES, { id: group.id, after: changes.cursor })).data.conversation.changes;
      expect(again).toMatchObject({ changes: [], hasMore: false, cursor: changes.cursor });
      // Bob sees everyone's changes but not alice's own hide.
      const bobs = (await bob.gql(CHANGES, { id: group.id, after: loaded.changesCursor })).data.conversation.changes;
      expect(bobs.changes.map((c: { kind: string }) => c.kind)).toEqual(['REVOKED', 'PURGED']);
    });

    it('pages with first and hasMore, and reports clears and the gone-through seq', async () => {
      const group = await groupWithAges(Array(5).fill(60_000));
      const start = (await page(bob, group.id)).changesCursor;
      for (const seq of [1, 2, 3]) await bob.gql(DELETE_FOR_ME, { messageIds: [idOf(group, seq)] });
      await bob.gql(CLEAR, { id: group.id });
      const first = (await bob.gql(CHANGES, { id: group.id, after: start, first: 2 })).data.conversation.changes;
      expect(first.changes.map((c: { kind: string; fromSeq: number }) => [c.kind, c.fromSeq])).toEqual([['HIDDEN', 1], ['HIDDEN', 2]]);
      expect(first.hasMore).toBe(true);
      const rest = (await bob.gql(CHANGES, { id: group.id, after: first.cursor, first: 2 })).data.conversation.changes;
      expect(rest.changes.map((c: { kind: string; toSeq: number }) => [c.kind, c.toSeq])).toEqual([['HIDDEN', 3], ['HISTORY_CLEARED', 5]]);
      expect(rest).toMatchObject({ hasMore: false, goneThroughSeq: 5 });
    });

    it('says nothing about messages below the viewer’s floor', async () => {
      const group = await groupWithAges(Array(6).fill(60_000));
      const start = (await page(bob, group.id)).changesCursor;
      await bob.gql(CLEAR, { id: group.id });
      await alice.gql(PURGE, { ids: [idOf(group, 2)] });
      expect((await alice.gql(REVOKE, { messageId: idOf(group, 3) })).errors).toBeUndefined();
      const bobs = (await bob.gql(CHANGES, { id: group.id, after: start })).data.conversation.changes;
      expect(bobs.changes.map((c: { kind: string }) => c.kind)).toEqual(['HISTORY_CLEARED']);
      const alices = (await alice.gql(CHANGES, { id: group.id, after: start })).data.conversation.changes;
      expect(alices.changes.map((c: { kind: string }) => c.kind)).toEqual(['PURGED', 'REVOKED']);
    });

    it('refuses an expired cursor with CHANGES_EXPIRED, and cursors of other kinds or conversations', async () => {
      const group = await groupWithAges(Array(3).fill(60_000));
      const other = await groupWithAges(Array(3).fill(60_000));
      const start = (await page(bob, group.id)).changesCursor;
      await alice.gql(PURGE, { ids: [idOf(group, 1)] });
      await alice.gql(PURGE, { ids: [idOf(group, 2)] });
      // As if the purge job had pruned the first entry.
      await harness.database.db.execute(sql`delete from conversation_changes where conv_id = ${group.uuid} and change_seq = 1`);
      await harness.database.db.execute(sql`update conversations set changes_pruned_through = 1 where id = ${group.uuid}`);
      const expired = await bob.gql(CHANGES, { id: group.id, after: start });
      expect(expired.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argumentName: 'after', reason: 'CHANGES_EXPIRED' });
      const foreign = (await page(bob, other.id)).changesCursor;
      expect(codes(await bob.gql(CHANGES, { id: group.id, after: foreign }))).toEqual(['BAD_USER_INPUT']);
      expect(codes(await bob.gql(CHANGES, { id: group.id, after: encodeCursor(group.uuid, 1) }))).toEqual(['BAD_USER_INPUT']);
      expect(codes(await bob.gql(CHANGES, { id: group.id, first: 501 }))).toEqual(['BAD_USER_INPUT']);
    });
  });

  describe('messagesAt', () => {
    // Seqs 1-3 three days old, 4-6 two days old, 7-9 one day old.
    let group: Awaited<ReturnType<typeof groupWithAges>>;
    beforeAll(async () => {
      group = await groupWithAges([3, 3, 3, 2, 2, 2, 1, 1, 1].map((days) => days * DAY_MS));
    });
    const at = (client: Client, msAgo: number, before = 1, after = 1) =>
      client.gql(AT, { id: group.id, time: new Date(Date.now() - msAgo).toISOString(), before, after });

    it('centres on the first message at or after the time, in at most 3 statements', async () => {
      const response = await at(bob, 2.5 * DAY_MS);
      expect(response.data.conversation.messagesAt).toEqual({
        edges: [{ node: { seq: 3 } }, { node: { seq: 4 } }, { node: { seq: 5 } }],
        anchorFound: true,
        pageInfo: { hasPreviousPage: true, hasNextPage: true },
      });
      expect(response.stats.statements).toBeLessThanOrEqual(3);
    });

    it('skips messages the viewer cannot see', async () => {
      await carol.gql(DELETE_FOR_ME, { messageIds: [idOf(group, 4)] });
      const response = await at(carol, 2.5 * DAY_MS, 0, 0);
      expect(response.data.conversation.messagesAt.edges).toEqual([{ node: { seq: 5 } }]);
    });

    it('answers the newest page, anchorFound false, when nothing is that recent', async () => {
      const response = await at(bob, -DAY_MS, 2, 2);
      expect(response.data.conversation.messagesAt).toEqual({
        edges: [{ node: { seq: 8 } }, { node: { seq: 9 } }],
        anchorFound: false,
        pageInfo: { hasPreviousPage: true, hasNextPage: false },
      });
    });

    it('answers NOT_FOUND to a non-member and BAD_USER_INPUT to a malformed time', async () => {
      const outsider = await harness.client('outsider');
      expect(codes(await at(outsider, DAY_MS))).toEqual(['NOT_FOUND']);
      expect(codes(await bob.gql(AT, { id: group.id, time: 'yesterday' }))).toEqual(['BAD_USER_INPUT']);
    });
  });
});
