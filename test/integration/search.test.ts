/**
 * `Query.search` through the real schema over HTTP: what it finds (Chinese,
 * English, mixed), its order and keyset pages, the permission filter before
 * the limit, the index kept in step with revokes, purges and erasures, its
 * errors and its cost, and the relevance set with its recall and precision.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { conversations } from '../../src/db/schema.ts';
import { conversationGlobalId, decodeMessageId, messageGlobalId } from '../../src/history/globalId.ts';
import { conversationSearchKey, indexLexemes, parseSearchQuery, type SearchQuery, searchVector, tsqueryFor } from '../../src/history/searchText.ts';
import { RECENT_WINDOW, searchKeySql } from '../../src/search/postgresSearch.ts';
import { expectedMatches, HAND_CHECKED, RELEVANCE_MESSAGES, RELEVANCE_QUERIES } from '../fixtures/searchRelevance.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness, storeMessages } from '../helpers/harness.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';

const SEARCH = `query Search($query: String!, $conversationId: ID, $first: Int, $after: String) {
  search(query: $query, conversationId: $conversationId, first: $first, after: $after) {
    edges { cursor node { id seq conversation { id } content { __typename ... on TextContent { text } } } snippet { text highlights { start end } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
const PURGE = `mutation ($ids: [ID!]!) { purgeMessages(input: { messageIds: $ids }) { purgedCount } }`;
const ERASE = `mutation ($user: ID!) { eraseUser(input: { userId: $user }) { erasedCount } }`;
const SET_POLICY = `mutation ($id: ID!, $max: Int) { setRetentionPolicy(input: { conversationId: $id, maxMessages: $max }) { conversation { id } } }`;
const REMOVE = `mutation ($id: ID!, $user: ID!) { removeMember(input: { conversationId: $id, userId: $user }) { conversation { id } } }`;

interface SearchEdge {
  cursor: string;
  node: { id: string; seq: number; conversation: { id: string }; content: { __typename: string; text?: string } };
  snippet: { text: string; highlights: { start: number; end: number }[] };
}

/** `text` parsed as a search query. */
function searchQuery(text: string): SearchQuery {
  const parsed = parseSearchQuery(text);
  if (!parsed.ok) throw new Error(`not a query: ${text}`);
  return parsed.query;
}

/** A deterministic pseudo-random sequence in [0, 1), so a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** The texts of a search's first page. */
async function texts(client: Client, query: string, variables: Record<string, unknown> = {}): Promise<string[]> {
  const response = await client.gql(SEARCH, { query, first: 100, ...variables });
  if (response.errors) throw new Error(JSON.stringify(response.errors));
  return (response.data.search.edges as SearchEdge[]).map((e) => e.node.content.text!);
}

/** Every hit of a search, page by page; the message ids in order. */
async function allHits(client: Client, query: string, first: number, variables: Record<string, unknown> = {}): Promise<{ ids: string[]; pages: number[] }> {
  const ids: string[] = [];
  const pages: number[] = [];
  let after: string | null = null;
  for (;;) {
    const response = await client.gql(SEARCH, { query, first, after, ...variables });
    if (response.errors) throw new Error(JSON.stringify(response.errors));
    const { edges, pageInfo } = response.data.search as { edges: SearchEdge[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    ids.push(...edges.map((e) => e.node.id));
    pages.push(edges.length);
    if (!pageInfo.hasNextPage) return { ids, pages };
    after = pageInfo.endCursor;
  }
}

describe.each(backends)('Search (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
  });
  afterAll(() => harness.close());

  describe('finds words', () => {
    let group: { id: string; uuid: string };
    beforeAll(async () => {
      group = await createGroup(alice, ['bob']);
      for (const text of ['历史消息同步有延迟', '消息漫游已经上线了', 'GraphQL 游标分页', 'Can you review my PR?', 'reviewer wanted', '周末去爬山吗']) {
        await send(alice, group.id, text);
      }
    });

    it('finds a two-character Chinese word inside a longer sentence, newest first', async () => {
      expect(await texts(bob, '消息')).toEqual(['消息漫游已经上线了', '历史消息同步有延迟']);
      expect(await texts(bob, '漫游')).toEqual(['消息漫游已经上线了']);
    });

    it('finds a CJK substring only where its characters are adjacent', async () => {
      expect(await texts(bob, '息漫')).toEqual(['消息漫游已经上线了']);
      expect(await texts(bob, '消息同步')).toEqual(['历史消息同步有延迟']);
      expect(await texts(bob, '消漫')).toEqual([]);
    });

    it('finds mixed text, its parts in any order, Latin in any case', async () => {
      expect(await texts(bob, 'GraphQL 游标分页')).toEqual(['GraphQL 游标分页']);
      expect(await texts(bob, '分页 graphql')).toEqual(['GraphQL 游标分页']);
      expect(await texts(bob, 'ＧＲＡＰＨＱＬ')).toEqual(['GraphQL 游标分页']);
    });

    it('matches Latin words whole, and needs every word', async () => {
      expect(await texts(bob, 'review')).toEqual(['Can you review my PR?']);
      expect(await texts(bob, 'review pr')).toEqual(['Can you review my PR?']);
      expect(await texts(bob, 'review lunch')).toEqual([]);
    });

    it('finds a single CJK character wherever it occurs', async () => {
      expect(await texts(bob, '游')).toEqual(['GraphQL 游标分页', '消息漫游已经上线了']);
    });

    it('answers each hit with the message as the viewer sees it and a highlighted snippet, in two statements', async () => {
      const response = await bob.gql(SEARCH, { query: '消息 延迟' });
      const edges = response.data.search.edges as SearchEdge[];
      expect(edges.map((e) => ({ content: e.node.content, snippet: e.snippet, conversation: e.node.conversation.id }))).toEqual([
        {
          content: { __typename: 'TextContent', text: '历史消息同步有延迟' },
          snippet: { text: '历史消息同步有延迟', highlights: [{ start: 2, end: 4 }, { start: 7, end: 9 }] },
          conversation: group.id,
        },
      ]);
      // The search statement (bodies included), then one batched conversation lookup for `conversation`.
      expect(response.stats.statements).toBe(2);
      expect(response.stats.batches).toEqual([{ loader: 'conversation', size: 1 }]);
    });
  });

  describe('pages', () => {
    let first: { id: string; uuid: string };
    let second: { id: string; uuid: string };
    beforeAll(async () => {
      first = await createGroup(alice, ['bob']);
      second = await createGroup(bob, ['alice']);
      // Interleaved across two conversations, so order is by time across them.
      for (let i = 1; i <= 25; i += 1) await send(i % 2 ? alice : bob, i % 2 ? first.id : second.id, `翻页测试 number ${i}`);
    });

    it('walks every hit exactly once, newest first, with full pages and exact flags', async () => {
      const { ids, pages } = await allHits(alice, '翻页测试', 7);
      expect(pages).toEqual([7, 7, 7, 4]);
      expect(new Set(ids).size).toBe(25);
      const all = await texts(alice, '翻页测试');
      expect(all).toEqual(Array.from({ length: 25 }, (_, i) => `翻页测试 number ${25 - i}`));
    });

    it('narrows to one conversation', async () => {
      const { ids } = await allHits(alice, '翻页测试', 5, { conversationId: second.id });
      expect(ids.map((id) => decodeMessageId(id)?.convId)).toEqual(Array(12).fill(second.uuid));
    });

    it('keeps pages full when the newest hits are hidden from the viewer', async () => {
      const top = await alice.gql(SEARCH, { query: '翻页测试', first: 5 });
      const hidden = (top.data.search.edges as SearchEdge[]).map((e) => e.node.id);
      expect((await alice.gql(DELETE_FOR_ME, { messageIds: hidden })).data.deleteMessagesForMe.deletedCount).toBe(5);
      const after = await texts(alice, '翻页测试', { first: 5 });
      expect(after).toEqual(['翻页测试 number 20', '翻页测试 number 19', '翻页测试 number 18', '翻页测试 number 17', '翻页测试 number 16']);
      // Bob still sees them.
      expect((await texts(bob, '翻页测试', { first: 1 }))[0]).toBe('翻页测试 number 25');
    });
  });

  describe('agrees with a model where conversations outrun the recent window', () => {
    // Conversations far longer than the first look (RECENT_WINDOW seqs), one
    // busy in the last hour, others spread over days or quiet for a week,
    // creation times on whole seconds so conversations tie; words in half,
    // a twentieth and a two-hundredth of the messages; hides and a clear.
    // Every walk, at every page size, must equal the model's order exactly.
    const WORDS = ['modelcommon', 'modelmedium', 'modelrare', '模型稀有', 'modelnone'];
    type Stored = { convId: string; seq: number; createdAt: number; text: string };
    const stored: Stored[] = [];
    const hidden = new Set<string>();
    const floors = new Map<string, number>();
    let mia: Client;
    let convIds: string[];

    beforeAll(async () => {
      mia = await harness.client('mia');
      const noah = await harness.client('noah');
      const next = random(7);
      const hour = 3_600_000;
      const now = Math.floor(Date.now() / 1000) * 1000;
      // [messages, first message's age, last message's age]
      const shapes: [number, number, number][] = [
        [300, hour, 0],
        [150, 10 * 24 * hour, 0],
        [90, 9 * 24 * hour, 7 * 24 * hour],
        [200, 5 * 24 * hour, 2 * hour],
        [RECENT_WINDOW - 5, 3 * hour, hour],
      ];
      convIds = [];
      for (const [count, from, to] of shapes) {
        const group = await createGroup(noah, ['mia']);
        convIds.push(group.uuid);
        const rows: Stored[] = [];
        for (let seq = 1; seq <= count; seq += 1) {
          const age = from - ((from - to) * (seq - 1)) / Math.max(1, count - 1);
          const roll = next();
          const words = [
            roll < 0.5 ? 'modelcommon' : 'filler',
            roll < 0.05 ? 'modelmedium' : '',
            roll < 0.005 || seq === 1 ? 'modelrare 模型稀有度' : '',
          ];
          rows.push({ convId: group.uuid, seq, createdAt: Math.floor((now - age) / 1000) * 1000, text: `${words.join(' ')} #${seq}` });
        }
        stored.push(...rows);
        await storeMessages(harness, group.uuid, 'noah', rows);
      }
      // Mia hides some of the newest matches and older ones, and clears the long quiet conversation's first half.
      const hides = stored.filter((r, i) => r.text.startsWith('modelcommon') && i % 7 === 0);
      for (const r of hides) hidden.add(`${r.convId}/${r.seq}`);
      const ids = hides.map((r) => messageGlobalId(r.convId, r.seq));
      expect((await mia.gql(DELETE_FOR_ME, { messageIds: ids })).data.deleteMessagesForMe.deletedCount).toBe(ids.length);
      const cleared = convIds[1]!;
      await harness.database.db.execute(sql`update members set clear_seq = 75 where conv_id = ${cleared}::uuid and user_id = 'mia'`);
      floors.set(cleared, 75);
    });

    /** The model: mia's visible matches of `word`, newest first (time, then conversation id, then seq, all descending). */
    const expected = (word: string, convId?: string): string[] => {
      // A Latin word matches whole; a CJK run anywhere in the text.
      const matches = (text: string) => (/^[a-z]+$/.test(word) ? indexLexemes(text).has(word) : text.includes(word));
      return stored
        .filter((r) => (convId === undefined || r.convId === convId) && r.seq > (floors.get(r.convId) ?? 0) && !hidden.has(`${r.convId}/${r.seq}`))
        .filter((r) => matches(r.text))
        .sort((a, b) => b.createdAt - a.createdAt || (a.convId < b.convId ? 1 : a.convId > b.convId ? -1 : b.seq - a.seq))
        .map((r) => messageGlobalId(r.convId, r.seq));
    };

    it.each(WORDS)('walks every hit of %s in the model order, at page sizes 1, 7, 20 and 100', async (word) => {
      const want = expected(word);
      if (word === 'modelnone') expect(want).toEqual([]);
      else expect(want.length).toBeGreaterThan(3);
      for (const first of [1, 7, 20, 100]) {
        if (first === 1 && want.length > 60) continue;
        const { ids } = await allHits(mia, word, first);
        expect(ids).toEqual(want);
      }
    });

    it('walks one conversation narrowed, in the model order', async () => {
      for (const convId of [convIds[0]!, convIds[1]!, convIds[4]!]) {
        const { ids } = await allHits(mia, 'modelcommon', 20, { conversationId: conversationGlobalId(convId) });
        expect(ids).toEqual(expected('modelcommon', convId));
      }
    });

    it('computes the conversation key in SQL exactly as in JavaScript', async () => {
      const keys = rowsOf<{ id: string; key: string }>(
        await harness.database.db.execute(
          sql`select id::text as id, ${searchKeySql(conversations.id)} as key from conversations where id = any(${sql.param(convIds)}::uuid[])`,
        ),
      );
      expect(keys.length).toBe(convIds.length);
      for (const { id, key } of keys) expect(key).toBe(conversationSearchKey(id));
    });
  });

  describe('shows nothing the viewer may not read', () => {
    it('never finds messages of conversations the viewer is not in', async () => {
      const secret = await createGroup(alice, ['bob']);
      await send(alice, secret.id, '秘密计划 launch code');
      expect(await texts(carol, '秘密计划')).toEqual([]);
      expect(await texts(carol, 'launch')).toEqual([]);
      const narrowed = await carol.gql(SEARCH, { query: '秘密计划', conversationId: secret.id });
      expect(codes(narrowed)).toEqual(['NOT_FOUND']);
      expect(narrowed.text).not.toContain('launch');
    });

    it('stops finding a removed member\'s former conversation at once', async () => {
      const group = await createGroup(alice, ['carol']);
      await send(alice, group.id, '移除成员测试');
      expect(await texts(carol, '移除成员')).toEqual(['移除成员测试']);
      await alice.gql(REMOVE, { id: group.id, user: 'carol' });
      expect(await texts(carol, '移除成员')).toEqual([]);
    });

    it('drops cleared history for that member only', async () => {
      const group = await createGroup(alice, ['bob']);
      await send(alice, group.id, '清空历史 before');
      await alice.gql(CLEAR, { conversationId: group.id });
      await send(alice, group.id, '清空历史 after');
      expect(await texts(alice, '清空历史')).toEqual(['清空历史 after']);
      expect(await texts(bob, '清空历史')).toEqual(['清空历史 after', '清空历史 before']);
    });

    it('drops revoked, purged and erased messages from the index in the same transaction', async () => {
      const group = await createGroup(alice, ['bob', 'dave']);
      const dave = await harness.client('dave');
      const revoked = await send(alice, group.id, '索引同步 revoked');
      const purged = await send(alice, group.id, '索引同步 purged');
      await send(dave, group.id, '索引同步 erased');
      await send(alice, group.id, '索引同步 kept');
      const indexed = async () =>
        rowsOf<{ n: number }>(
          await harness.database.db.execute(sql`select count(*)::int as n from message_bodies
            where conv_id = ${group.uuid} and search_terms @@ ${tsqueryFor(searchQuery('索引同步'), conversationSearchKey(group.uuid))}::tsquery`),
        )[0]!.n;
      expect(await indexed()).toBe(4);
      expect(codes(await alice.gql(REVOKE, { messageId: revoked.id }))).toEqual([]);
      expect(codes(await alice.gql(PURGE, { ids: [purged.id] }))).toEqual([]);
      const admin = await harness.client('moderator', { roles: ['admin'] });
      expect(codes(await admin.gql(ERASE, { user: 'dave' }))).toEqual([]);
      expect(await indexed()).toBe(1);
      expect(await texts(bob, '索引同步')).toEqual(['索引同步 kept']);
    });

    it('never finds expired messages, before the purge has run', async () => {
      const group = await createGroup(alice, ['bob']);
      for (let i = 1; i <= 4; i += 1) await send(alice, group.id, `保留策略 ${i}`);
      expect(codes(await alice.gql(SET_POLICY, { id: group.id, max: 2 }))).toEqual([]);
      expect(await texts(bob, '保留策略')).toEqual(['保留策略 4', '保留策略 3']);
    });
  });

  describe('refuses bad arguments', () => {
    it('answers BAD_USER_INPUT naming the argument', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ query: ' ?! ' }, 'query'],
        [{ query: 'x'.repeat(201) }, 'query'],
        [{ query: '消息', first: 0 }, 'first'],
        [{ query: '消息', first: 101 }, 'first'],
        [{ query: '消息', after: 'nonsense' }, 'after'],
      ];
      for (const [variables, argumentName] of cases) {
        const response = await alice.gql(SEARCH, variables);
        expect(response.errors?.map((e) => e.extensions)).toEqual([{ code: 'BAD_USER_INPUT', argumentName }]);
      }
    });

    it('takes a cursor back only for the same search', async () => {
      const group = await createGroup(alice, ['bob']);
      for (let i = 0; i < 3; i += 1) await send(alice, group.id, `游标校验 ${i}`);
      const page = await alice.gql(SEARCH, { query: '游标校验', first: 1 });
      const cursor = page.data.search.pageInfo.endCursor as string;
      expect(codes(await alice.gql(SEARCH, { query: '游标校验', first: 1, after: cursor }))).toEqual([]);
      expect(codes(await alice.gql(SEARCH, { query: '校验', first: 1, after: cursor }))).toEqual(['BAD_USER_INPUT']);
      expect(codes(await alice.gql(SEARCH, { query: '游标校验', first: 1, after: cursor, conversationId: group.id }))).toEqual(['BAD_USER_INPUT']);
    });

    it('counts its page size in the query cost', async () => {
      const response = await alice.gql(`query { search(query: "x", first: 100) { edges { node { conversation { messages(last: 100) { edges { cursor } } } } } } }`);
      expect(codes(response)).toEqual(['QUERY_TOO_COMPLEX']);
    });
  });

  describe('relevance set', () => {
    it(`finds every exact word and CJK substring among ${RELEVANCE_MESSAGES.length} messages, over ${RELEVANCE_QUERIES.length} queries`, async () => {
      const group = await createGroup(alice, ['erin']);
      const erin = await harness.client('erin');
      const seqToIndex = new Map<number, number>();
      for (const [index, text] of RELEVANCE_MESSAGES.entries()) {
        const { seq } = await send(alice, group.id, text, `relevance-${index}`);
        seqToIndex.set(seq, index);
      }
      for (const [query, rule] of Object.entries(HAND_CHECKED)) {
        expect({ query, oracle: [...expectedMatches(query, RELEVANCE_MESSAGES)] }).toEqual({
          query,
          oracle: RELEVANCE_MESSAGES.flatMap((t, i) => (rule(t) ? [i] : [])),
        });
      }
      const totals = { all: { expected: 0, found: 0, returned: 0 }, exact: { expected: 0, found: 0, returned: 0 } };
      const misses: string[] = [];
      for (const { query, exactOrSubstring } of RELEVANCE_QUERIES) {
        const expected = expectedMatches(query, RELEVANCE_MESSAGES);
        const { ids } = await allHits(erin, query, 100);
        const returned = ids.map((id) => seqToIndex.get(decodeMessageId(id)!.seq)!);
        const found = returned.filter((i) => expected.has(i)).length;
        for (const bucket of exactOrSubstring ? [totals.all, totals.exact] : [totals.all]) {
          bucket.expected += expected.size;
          bucket.found += found;
          bucket.returned += returned.length;
        }
        if (found !== expected.size || returned.length !== expected.size) misses.push(`${query}: expected ${expected.size}, found ${found} of ${returned.length}`);
      }
      const pct = (a: number, b: number) => (b === 0 ? '100.0' : ((100 * a) / b).toFixed(1));
      console.log(
        `search relevance (${backend}): ${RELEVANCE_MESSAGES.length} messages, ${RELEVANCE_QUERIES.length} queries; ` +
          `recall ${pct(totals.all.found, totals.all.expected)}%, precision ${pct(totals.all.found, totals.all.returned)}% ` +
          `(${totals.all.found} of ${totals.all.expected} expected hits, ${totals.all.returned} returned); ` +
          `exact words and CJK substrings: recall ${pct(totals.exact.found, totals.exact.expected)}%, precision ${pct(totals.exact.found, totals.exact.returned)}%`,
      );
      expect(misses).toEqual([]);
      expect(totals.exact.found).toBe(totals.exact.expected);
    });
  });
});
