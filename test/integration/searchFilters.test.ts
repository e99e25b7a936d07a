/**
 * `search(filter:)` through the real schema over HTTP: each condition
 * narrows inside the search (full pages, exact flags, cursors bound to the
 * filter), searches without words, newest first, the views applied to what
 * a filter lets through, the conversation named as an argument or in the
 * filter, the statements a search costs, and a model of many conversations
 * that every filter's walk must equal exactly.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { conversationGlobalId, decodeMessageId, messageGlobalId } from '../../src/history/globalId.ts';
import { indexLexemes, parseSearchQuery, type SearchQuery, searchVector } from '../../src/history/searchText.ts';
import { postgresSearch, RECENT_WINDOW } from '../../src/search/postgresSearch.ts';
import type { MessageFilter } from '../../src/history/messageFilter.ts';
import { KEEP_EVERYTHING } from '../../src/history/retention.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, seedMessages, startHarness, storeMessages } from '../helpers/harness.ts';
import { CLEAR, createGroup, DELETE_FOR_ME, REVOKE, send } from '../helpers/operations.ts';
import { recordingRunner, statementCost } from '../helpers/statementCost.ts';

const SEARCH = `query Search($query: String, $conversationId: ID, $filter: MessageFilter, $first: Int, $after: String) {
  search(query: $query, conversationId: $conversationId, filter: $filter, first: $first, after: $after) {
    edges { cursor node { id seq createdAt sender { id } replyCount content { __typename ... on TextContent { text } } } snippet { text highlights { start end } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
const STAR = `mutation ($id: ID!) { starMessage(input: { messageId: $id }) { message { id } } }`;
const PIN = `mutation ($id: ID!) { pinMessage(input: { messageId: $id }) { message { id } } }`;
const REMOVE = `mutation ($id: ID!, $user: ID!) { removeMember(input: { conversationId: $id, userId: $user }) { conversation { id } } }`;
const SEND_MENTIONING = `mutation ($c: ID!, $text: String!, $ids: [ID!], $everyone: Boolean) {
  sendMessage(input: { conversationId: $c, clientMsgId: $text, text: $text, mentionUserIds: $ids, mentionEveryone: $everyone }) { message { id seq } } }`;
const REPLY = `mutation ($c: ID!, $m: ID!, $text: String!) {
  sendMessage(input: { conversationId: $c, clientMsgId: $text, text: $text, replyToMessageId: $m }) { message { id seq } } }`;

interface SearchEdge {
  cursor: string;
  node: { id: string; seq: number; createdAt: string; sender: { id: string }; replyCount: number; content: { __typename: string; text?: string } };
  snippet: { text: string; highlights: { start: number; end: number }[] };
}
interface SearchPage {
  edges: SearchEdge[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
}

/** One page of a search; fails the test on any error. */
async function page(client: Client, variables: Record<string, unknown>): Promise<SearchPage> {
  const response = await client.gql(SEARCH, variables);
  if (response.errors) throw new Error(JSON.stringify(response.errors));
  return response.data.search as SearchPage;
}

/** The texts of a search's first page (100 hits). */
async function texts(client: Client, variables: Record<string, unknown>): Promise<string[]> {
  return (await page(client, { first: 100, ...variables })).edges.map((e) => e.node.content.text!);
}

/** Every hit of a search, page by page: the message ids in order, and each page's size. */
async function walk(client: Client, variables: Record<string, unknown>, first: number): Promise<{ ids: string[]; pages: number[] }> {
  const ids: string[] = [];
  const pages: number[] = [];
  let after: string | null = null;
  for (;;) {
    const { edges, pageInfo } = await page(client, { ...variables, first, after });
    ids.push(...edges.map((e) => e.node.id));
    pages.push(edges.length);
    if (!pageInfo.hasNextPage) return { ids, pages };
    after = pageInfo.endCursor;
  }
}

/** The page sizes a walk of `total` hits at `first` a page must have: full pages, then the rest (none when they divide evenly). */
const fullPages = (total: number, first: number) => [...Array(Math.floor(total / first)).fill(first), ...(total % first > 0 || total === 0 ? [total % first] : [])];

/** A deterministic pseudo-random sequence in [0, 1), so a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** A filter with no conditions, for the store calls made directly. */
const NO_CONDITIONS: MessageFilter = { senderIds: null, sentAfter: null, sentBefore: null, mentionsMe: null, starred: null, pinned: null, hasReplies: null };
/** The retention clock of a server that keeps everything, now. */
const keepAll = () => ({ server: KEEP_EVERYTHING, now: new Date() });

/** The search query of `text`, which must be one. */
function wordsOf(text: string): SearchQuery {
  const parsed = parseSearchQuery(text);
  if (!parsed.ok) throw new Error(`not a query: ${text}`);
  return parsed.query;
}

describe.each(backends)('Search filters (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let pete: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    bob = await harness.client('bob');
    carol = await harness.client('carol');
    pete = await harness.client('pete');
  });
  afterAll(() => harness.close());

  /** `text` sent by `client` naming `mentionUserIds` and, if `everyone`, everyone. */
  const sendMentioning = async (client: Client, conversationId: string, text: string, mentionUserIds: string[], everyone = false) => {
    const response = await client.gql(SEND_MENTIONING, { c: conversationId, text, ids: mentionUserIds, everyone });
    if (response.errors) throw new Error(JSON.stringify(response.errors));
    return response.data.sendMessage.message as { id: string; seq: number };
  };
  /** Rows of `message_mentions` for `seq` of `convUuid`, as a send naming `userIds` writes them, for messages inserted without a send. */
  const mention = async (convUuid: string, seq: number, userIds: string[]) => {
    for (const [i, userId] of userIds.entries()) {
      await harness.database.db.execute(sql`insert into message_mentions (conv_id, seq, user_id, position, sent_at)
        select conv_id, seq, ${userId}, ${userId === '' ? 0 : i + 1}, created_at from messages where conv_id = ${convUuid}::uuid and seq = ${seq}`);
    }
  };

  describe('narrows by each condition, inside the search', () => {
    let group: { id: string; uuid: string };
    /** The messages sent, oldest first, with their texts and senders. */
    const sent: { text: string; sender: string; id: string; seq: number }[] = [];
    const textsBy = (pick: (m: (typeof sent)[number]) => boolean) => sent.filter(pick).map((m) => m.text).reverse();

    /** Who the message at each index of `sent` mentions ('' is everyone), as its sender sent it. */
    const mentions = new Map<number, string[]>([
      [8, ['carol', 'bob']],
      [11, ['']],
      [13, ['bob']],
      [15, ['alice']],
      [17, ['carol']],
    ]);

    beforeAll(async () => {
      group = await createGroup(alice, ['bob', 'carol']);
      // Interleaved: each condition lets through every third or fourth message, so an unfiltered page differs from a filtered one.
      const senders = [alice, carol, bob];
      for (let i = 1; i <= 24; i += 1) {
        const client = senders[i % 3]!;
        const text = `narrow ${i} of ${client.userId}`;
        const named = mentions.get(i - 1) ?? [];
        const message = await sendMentioning(client, group.id, text, named.filter((id) => id !== ''), named.includes(''));
        sent.push({ ...message, text, sender: client.userId });
      }
    });

    it('finds only the senders asked for, newest first, with words and without', async () => {
      const want = textsBy((m) => m.sender === 'carol');
      expect(want).toHaveLength(8);
      expect(await texts(bob, { query: 'narrow', filter: { senderIds: ['carol'] } })).toEqual(want);
      expect(await texts(bob, { filter: { senderIds: ['carol'] } })).toEqual(want);
      expect(await texts(bob, { query: 'narrow', filter: { senderIds: ['carol', 'alice'] } })).toEqual(textsBy((m) => m.sender !== 'bob'));
      expect(await texts(bob, { query: 'narrow', filter: { senderIds: ['nobody'] } })).toEqual([]);
    });

    it('keeps every page full and hasNextPage exact when the hits are a third of the matches', async () => {
      const { ids, pages } = await walk(bob, { query: 'narrow', filter: { senderIds: ['carol'] } }, 3);
      expect(pages).toEqual([3, 3, 2]);
      expect(ids).toEqual(sent.filter((m) => m.sender === 'carol').map((m) => m.id).reverse());
      // Eight hits in pages of four: the second page is the last, and says so.
      expect((await walk(bob, { filter: { senderIds: ['carol'] } }, 4)).pages).toEqual([4, 4]);
    });

    it('finds messages that mention the viewer or everyone, never the viewer\'s own, and the rest with mentionsMe: false', async () => {
      // Senders rotate carol, bob, alice: alice (the owner) named carol and bob in sent[8], everyone in sent[11] and carol in
      // sent[17]; bob named himself in sent[13]; carol named alice in sent[15].
      const [byName, byEveryone, ownNamingMe, namingAlice, namingCarol] = [sent[8]!, sent[11]!, sent[13]!, sent[15]!, sent[17]!];
      expect([byName, byEveryone, ownNamingMe, namingAlice, namingCarol].map((m) => m.sender)).toEqual(['alice', 'alice', 'bob', 'carol', 'alice']);
      expect(await texts(bob, { query: 'narrow', filter: { mentionsMe: true } })).toEqual([byEveryone.text, byName.text]);
      expect(await texts(bob, { filter: { mentionsMe: true } })).toEqual([byEveryone.text, byName.text]);
      expect(await texts(carol, { filter: { mentionsMe: true } })).toEqual([namingCarol.text, byEveryone.text, byName.text]);
      // Alice's own messages never mention her, her mention of everyone included.
      expect(await texts(alice, { filter: { mentionsMe: true } })).toEqual([namingAlice.text]);
      expect(await texts(alice, { filter: { mentionsMe: false, senderIds: ['alice'] } })).toEqual(textsBy((m) => m.sender === 'alice'));
      expect(await texts(bob, { query: 'narrow', filter: { mentionsMe: false } })).toEqual(textsBy((m) => m !== byName && m !== byEveryone));
    });

    it('finds the viewer\'s own stars only', async () => {
      const [a, b, c] = [sent[2]!, sent[9]!, sent[20]!];
      for (const m of [a, c]) expect(codes(await bob.gql(STAR, { id: m.id }))).toEqual([]);
      expect(codes(await carol.gql(STAR, { id: b.id }))).toEqual([]);
      expect(await texts(bob, { query: 'narrow', filter: { starred: true } })).toEqual([c.text, a.text]);
      expect(await texts(bob, { filter: { starred: true } })).toEqual([c.text, a.text]);
      expect(await texts(carol, { filter: { starred: true } })).toEqual([b.text]);
      expect(await texts(bob, { filter: { starred: false, senderIds: [a.sender, c.sender] } })).toEqual(
        textsBy((m) => (m.sender === a.sender || m.sender === c.sender) && m !== a && m !== c),
      );
    });

    it('finds pinned messages, and the others with pinned: false', async () => {
      const [a, b] = [sent[5]!, sent[17]!];
      for (const m of [a, b]) expect(codes(await alice.gql(PIN, { id: m.id }))).toEqual([]);
      expect(await texts(bob, { query: 'narrow', filter: { pinned: true } })).toEqual([b.text, a.text]);
      expect(await texts(carol, { filter: { pinned: true } })).toEqual([b.text, a.text]);
      expect(await texts(bob, { query: 'narrow', filter: { pinned: false } })).toEqual(textsBy((m) => m !== a && m !== b));
    });

    it('combines conditions: every one must hold', async () => {
      // Bob starred sent[2] and sent[20] and now sent[17]; alice pinned sent[5] and sent[17]: only sent[17] is both.
      expect(codes(await bob.gql(STAR, { id: sent[17]!.id }))).toEqual([]);
      const starredByBob = new Set([sent[2]!, sent[20]!, sent[17]!]);
      const pinned = new Set([sent[5]!, sent[17]!]);
      expect(await texts(bob, { query: 'narrow', filter: { starred: false, pinned: false, senderIds: ['alice', 'bob'] } })).toEqual(
        textsBy((m) => m.sender !== 'carol' && !starredByBob.has(m) && !pinned.has(m)),
      );
      expect(await texts(bob, { filter: { starred: true, pinned: true } })).toEqual([sent[17]!.text]);
      expect(await texts(bob, { query: 'narrow', filter: { starred: true, pinned: false, senderIds: ['alice'] } })).toEqual([sent[20]!.text, sent[2]!.text]);
    });
  });

  describe('bounds the time exclusively', () => {
    let group: { id: string; uuid: string };
    const stamps = ['2025-06-01T10:00:00.000Z', '2025-06-01T10:00:00.000Z', '2025-06-01T10:00:01.000Z', '2025-06-01T10:00:01.500Z', '2025-06-01T10:00:02.000Z'];

    beforeAll(async () => {
      group = await createGroup(alice, ['bob']);
      for (let i = 0; i < stamps.length; i += 1) await send(alice, group.id, `timed ${i + 1}`);
      // Creation times on the clock the tests choose, still following seq (two messages share the first instant).
      for (const [i, stamp] of stamps.entries()) {
        await harness.database.db.execute(sql`update messages set created_at = ${stamp}::timestamptz where conv_id = ${group.uuid}::uuid and seq = ${i + 1}`);
      }
    });

    it('leaves out a message sent exactly at sentAfter or sentBefore', async () => {
      expect(await texts(bob, { query: 'timed', filter: { sentAfter: stamps[2] } })).toEqual(['timed 5', 'timed 4']);
      expect(await texts(bob, { query: 'timed', filter: { sentBefore: stamps[2] } })).toEqual(['timed 2', 'timed 1']);
      expect(await texts(bob, { filter: { conversationId: group.id, sentAfter: stamps[0], sentBefore: stamps[4] } })).toEqual(['timed 4', 'timed 3']);
      expect(await texts(bob, { filter: { conversationId: group.id, sentAfter: stamps[2], sentBefore: stamps[3] } })).toEqual([]);
    });

    it('reads any offset and any fraction of a second to the microsecond', async () => {
      expect(await texts(bob, { query: 'timed', filter: { sentAfter: '2025-06-01T12:00:01.4999999+02:00', sentBefore: '2025-06-01T10:00:01.5000001Z' } })).toEqual(['timed 4']);
      expect(await texts(bob, { query: 'timed', filter: { sentAfter: '2025-06-01T10:00:01.5000001Z' } })).toEqual(['timed 5']);
      expect(await texts(bob, { query: 'timed', filter: { sentBefore: '2025-06-01T10:00:00.0000001Z' } })).toEqual(['timed 2', 'timed 1']);
    });
  });

  describe('answers replies the way the thread fields count them', () => {
    it('finds roots with a reply the viewer can see, and the rest with hasReplies: false', async () => {
      const group = await createGroup(alice, ['bob', 'carol']);
      const roots = [];
      for (let i = 1; i <= 6; i += 1) roots.push(await send(alice, group.id, `threaded ${i}`));
      const reply = async (root: { id: string }, text: string) => {
        const response = await carol.gql(REPLY, { c: group.id, m: root.id, text });
        if (response.errors) throw new Error(JSON.stringify(response.errors));
        return response.data.sendMessage.message as { id: string; seq: number };
      };
      await reply(roots[1]!, 'threaded reply to 2');
      const onlyReplyOf4 = await reply(roots[3]!, 'threaded reply to 4');
      await reply(roots[4]!, 'threaded reply to 5');
      const revokedReplyOf5 = await reply(roots[4]!, 'threaded second reply to 5');
      const revokedReplyOf6 = await reply(roots[5]!, 'threaded reply to 6');
      // Bob deletes 4's only reply for himself: 4 has no reply he can see. Revoked replies still count (`replyCount` counts them).
      expect((await bob.gql(DELETE_FOR_ME, { messageIds: [onlyReplyOf4.id] })).data.deleteMessagesForMe.deletedCount).toBe(1);
      for (const r of [revokedReplyOf5, revokedReplyOf6]) expect(codes(await carol.gql(REVOKE, { messageId: r.id }))).toEqual([]);
      const withReplies = await page(bob, { query: 'threaded', filter: { hasReplies: true } });
      expect(withReplies.edges.map((e) => e.node.content.text)).toEqual(['threaded 6', 'threaded 5', 'threaded 2']);
      expect(withReplies.edges.every((e) => e.node.replyCount > 0)).toBe(true);
      const without = await page(bob, { query: 'threaded', filter: { hasReplies: false } });
      expect(without.edges.map((e) => e.node.content.text)).toEqual(['threaded reply to 5', 'threaded reply to 2', 'threaded 4', 'threaded 3', 'threaded 1']);
      expect(without.edges.map((e) => e.node.replyCount)).toEqual([0, 0, 0, 0, 0]);
      // Carol still sees 4's reply.
      expect(await texts(carol, { filter: { conversationId: group.id, hasReplies: true } })).toEqual(['threaded 6', 'threaded 5', 'threaded 4', 'threaded 2']);
    });
  });

  describe('searches without words', () => {
    it('finds every message the filter lets through, newest first across conversations, the start of each text as its snippet', async () => {
      const [wren, xavi, yuki] = [await harness.client('wren'), await harness.client('xavi'), await harness.client('yuki')];
      const first = await createGroup(xavi, ['wren', 'yuki']);
      const second = await createGroup(yuki, ['wren']);
      const long = `${'开头'.repeat(70)} and the rest`;
      await send(xavi, first.id, 'wordless one');
      await send(yuki, second.id, 'wordless two');
      await send(wren, first.id, 'wordless from the viewer');
      await send(yuki, first.id, long, 'the long one');
      await send(xavi, first.id, 'wordless four');
      const found = await page(wren, { filter: { senderIds: ['xavi', 'yuki'] }, first: 4 });
      expect(found.edges.map((e) => e.node.content.text)).toEqual(['wordless four', long, 'wordless two', 'wordless one']);
      expect(found.edges.map((e) => e.snippet)).toEqual([
        { text: 'wordless four', highlights: [] },
        { text: `${long.slice(0, 120)}…`, highlights: [] },
        { text: 'wordless two', highlights: [] },
        { text: 'wordless one', highlights: [] },
      ]);
      expect(found.pageInfo.hasNextPage).toBe(false);
    });

    it('takes a conversation alone, as an argument or in the filter, and pages through it', async () => {
      const group = await createGroup(alice, ['bob']);
      for (let i = 1; i <= 5; i += 1) await send(i % 2 ? alice : bob, group.id, `all of it ${i}`);
      const want = ['all of it 5', 'all of it 4', 'all of it 3', 'all of it 2', 'all of it 1'];
      expect(await texts(bob, { conversationId: group.id })).toEqual(want);
      expect(await texts(bob, { filter: { conversationId: group.id } })).toEqual(want);
      expect(await texts(bob, { conversationId: group.id, filter: { conversationId: group.id } })).toEqual(want);
      const { pages } = await walk(bob, { filter: { conversationId: group.id } }, 2);
      expect(pages).toEqual([2, 2, 1]);
    });

    it('refuses a search with neither words nor a condition, naming `query`', async () => {
      for (const variables of [{}, { filter: {} }, { query: null, filter: { starred: null, senderIds: null } }]) {
        const response = await bob.gql(SEARCH, variables);
        expect(response.errors?.map((e) => e.extensions)).toEqual([{ code: 'BAD_USER_INPUT', argumentName: 'query' }]);
      }
    });
  });

  describe('applies the views to what a filter lets through', () => {
    it('never finds a message hidden, cleared, revoked or of a conversation the viewer left, though it is starred, pinned or mentions them', async () => {
      const group = await createGroup(alice, ['bob', 'carol']);
      const cleared = await sendMentioning(alice, group.id, 'viewed cleared', ['bob']);
      await send(alice, group.id, 'viewed kept before');
      const hidden = await sendMentioning(alice, group.id, 'viewed hidden', ['bob']);
      const revoked = await sendMentioning(alice, group.id, 'viewed revoked', ['bob']);
      const kept = await sendMentioning(alice, group.id, 'viewed kept', ['bob']);
      for (const m of [cleared, hidden, revoked, kept]) {
        expect(codes(await bob.gql(STAR, { id: m.id }))).toEqual([]);
        expect(codes(await alice.gql(PIN, { id: m.id }))).toEqual([]);
      }
      const marked = ['viewed kept', 'viewed revoked', 'viewed hidden', 'viewed cleared'];
      expect(await texts(bob, { filter: { conversationId: group.id, starred: true } })).toEqual(marked);
      await harness.database.db.execute(sql`update members set clear_seq = ${cleared.seq} where conv_id = ${group.uuid}::uuid and user_id = 'bob'`);
      expect((await bob.gql(DELETE_FOR_ME, { messageIds: [hidden.id] })).data.deleteMessagesForMe.deletedCount).toBe(1);
      expect(codes(await alice.gql(REVOKE, { messageId: revoked.id }))).toEqual([]);
      for (const condition of [{ starred: true }, { pinned: true }, { mentionsMe: true }, { senderIds: ['alice'] }]) {
        const want = 'senderIds' in condition ? ['viewed kept', 'viewed kept before'] : ['viewed kept'];
        const filter = { ...condition, conversationId: group.id };
        expect({ condition, found: await texts(bob, { filter }) }).toEqual({ condition, found: want });
        expect({ condition, found: await texts(bob, { query: 'viewed', filter }) }).toEqual({ condition, found: want });
      }
      // Alice cleared and hid nothing: only the revoked message is gone for her.
      expect(await texts(alice, { filter: { conversationId: group.id } })).toEqual(['viewed kept', 'viewed hidden', 'viewed kept before', 'viewed cleared']);
      // Clearing the whole history leaves bob nothing to find; carol, removed, finds nothing and may not name it.
      await bob.gql(CLEAR, { conversationId: group.id });
      expect(await texts(bob, { filter: { conversationId: group.id } })).toEqual([]);
      expect(await texts(carol, { query: 'viewed', filter: { pinned: true } })).toEqual(['viewed kept', 'viewed hidden', 'viewed cleared']);
      expect(codes(await alice.gql(REMOVE, { id: group.id, user: 'carol' }))).toEqual([]);
      expect(await texts(carol, { query: 'viewed', filter: { pinned: true } })).toEqual([]);
      expect(codes(await carol.gql(SEARCH, { filter: { conversationId: group.id } }))).toEqual(['NOT_FOUND']);
    });

    it('never finds messages of conversations the viewer is not in, and answers NOT_FOUND when one is named, in the filter as in the argument', async () => {
      const secret = await createGroup(alice, ['bob']);
      await send(alice, secret.id, 'outsider secret');
      expect(await texts(pete, { filter: { senderIds: ['alice'] } })).toEqual([]);
      for (const variables of [
        { filter: { conversationId: secret.id } },
        { query: 'outsider', filter: { conversationId: secret.id, senderIds: ['alice'] } },
        { conversationId: secret.id, filter: { conversationId: secret.id, pinned: false } },
        { filter: { conversationId: 'not-a-conversation' } },
      ]) {
        const response = await pete.gql(SEARCH, variables);
        expect(codes(response)).toEqual(['NOT_FOUND']);
        expect(response.text).not.toContain('secret');
      }
    });

    it('refuses two different conversations, naming `filter.conversationId`, before it looks at either', async () => {
      const mine = await createGroup(bob, ['alice']);
      const secret = await createGroup(alice, ['carol']);
      for (const [conversationId, filterId] of [
        [mine.id, secret.id],
        [secret.id, mine.id],
        [mine.id, 'not-a-conversation'],
      ]) {
        const response = await bob.gql(SEARCH, { query: 'x', conversationId, filter: { conversationId: filterId } });
        expect(response.errors?.map((e) => e.extensions)).toEqual([{ code: 'BAD_USER_INPUT', argumentName: 'filter.conversationId' }]);
      }
    });
  });

  describe('binds its cursors to the filter', () => {
    it('takes a cursor back for the same filter in any spelling, and refuses one of another filter naming `after`', async () => {
      const group = await createGroup(alice, ['bob', 'carol']);
      for (let i = 0; i < 4; i += 1) await send(i % 2 ? carol : alice, group.id, `bound cursor ${i}`);
      const first = await page(bob, { query: 'bound', filter: { senderIds: ['carol', 'alice'] }, first: 1 });
      const after = first.pageInfo.endCursor;
      const ok = [
        { query: 'bound', filter: { senderIds: ['alice', 'carol', 'alice'] } },
        { query: 'BOUND', filter: { senderIds: ['carol', 'alice'], mentionsMe: null } },
      ];
      for (const variables of ok) expect(codes(await bob.gql(SEARCH, { ...variables, first: 1, after }))).toEqual([]);
      const refused = [
        { query: 'bound' },
        { query: 'bound', filter: { senderIds: ['alice'] } },
        { query: 'bound', filter: { senderIds: ['carol', 'alice'], starred: false } },
        { filter: { senderIds: ['carol', 'alice'] } },
        { query: 'bound', conversationId: group.id, filter: { senderIds: ['carol', 'alice'] } },
      ];
      for (const variables of refused) {
        const response = await bob.gql(SEARCH, { ...variables, first: 1, after });
        expect(response.errors?.map((e) => e.extensions)).toEqual([{ code: 'BAD_USER_INPUT', argumentName: 'after' }]);
      }
      // A search of words alone refuses the filtered cursor too, and its own cursor is refused by the filtered search.
      const plain = await page(bob, { query: 'bound', first: 1 });
      expect(codes(await bob.gql(SEARCH, { query: 'bound', filter: { senderIds: ['alice', 'carol'] }, first: 1, after: plain.pageInfo.endCursor }))).toEqual(['BAD_USER_INPUT']);
    });
  });

  describe('refuses bad filters', () => {
    it('answers BAD_USER_INPUT naming the field at fault', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ query: 'x', filter: { senderIds: [] } }, 'filter.senderIds'],
        [{ query: 'x', filter: { senderIds: Array.from({ length: 101 }, (_, i) => `u${i}`) } }, 'filter.senderIds'],
        [{ query: 'x', filter: { senderIds: ['ok', ''] } }, 'filter.senderIds'],
        [{ filter: { senderIds: ['a\u0000b'] } }, 'filter.senderIds'],
        [{ query: 'x', filter: { sentAfter: '2026-01-01T00:00:00Z', sentBefore: '2026-01-01T00:00:00Z' } }, 'filter.sentBefore'],
        [{ filter: { sentAfter: '2026-01-02T00:00:00Z', sentBefore: '2026-01-01T00:00:00Z' } }, 'filter.sentBefore'],
        [{ query: ' !? ', filter: { pinned: true } }, 'query'],
      ];
      for (const [variables, argumentName] of cases) {
        const response = await bob.gql(SEARCH, variables);
        expect(response.errors?.map((e) => e.extensions)).toEqual([{ code: 'BAD_USER_INPUT', argumentName }]);
      }
    });
  });

  describe('costs', () => {
    it('one statement per page, whatever the filter, with words or without, first page or next', async () => {
      const group = await createGroup(alice, ['bob']);
      for (let i = 0; i < 6; i += 1) await send(alice, group.id, `costed ${i}`);
      const everything = { senderIds: ['alice'], sentAfter: '2000-01-01T00:00:00Z', sentBefore: '2100-01-01T00:00:00Z', mentionsMe: false, starred: false, pinned: false, hasReplies: false };
      const SLIM = `query ($query: String, $filter: MessageFilter, $after: String) {
        search(query: $query, filter: $filter, first: 2, after: $after) { edges { node { id conversation { id } content { ... on TextContent { text } } } snippet { text } } pageInfo { endCursor } } }`;
      for (const variables of [{ query: 'costed', filter: everything }, { filter: everything }, { filter: { conversationId: group.id, starred: true } }, { query: 'costed', filter: { pinned: true } }]) {
        const first = await bob.gql(SLIM, variables);
        expect(codes(first)).toEqual([]);
        // The search statement (bodies included), then one batched conversation lookup for `conversation`.
        expect({ variables, statements: first.stats.statements }).toEqual({ variables, statements: first.data.search.edges.length > 0 ? 2 : 1 });
        const cursor = first.data.search.pageInfo.endCursor;
        if (cursor === null) continue;
        const next = await bob.gql(SLIM, { ...variables, after: cursor });
        expect(codes(next)).toEqual([]);
        expect(next.stats.statements).toBe(2);
        expect(next.stats.batches).toEqual([{ loader: 'conversation', size: 1 }]);
      }
    });

    it('reads about one hit per conversation, not every match of every conversation, when their newest messages do not match', async () => {
      // 30 conversations of 120 messages, sent in step (a second apart
      // between conversations, 30 s between seqs); the word is in every
      // second message but none of the newest 24, as when a conversation
      // has moved on to other things. The first page is the 20 newest
      // conversations' last match. Reading every match of every
      // conversation (their whole GIN lookup) visits 1,440 bodies, and
      // checking the first 21 of each, 630 messages.
      const pia = await harness.client('pia');
      const quiet = 24;
      const count = 120;
      const base = Math.floor(Date.now() / 1000) * 1000 - 2 * count * 30_000;
      const convIds: string[] = [];
      for (let k = 0; k < 30; k += 1) {
        const group = await createGroup(pia, ['bob']);
        convIds.push(group.uuid);
        const rows = Array.from({ length: count }, (_, i) => {
          const seq = i + 1;
          const text = seq <= count - quiet && seq % 2 === 0 ? `costword filler #${seq}` : `filler #${seq}`;
          return { seq, createdAt: base + seq * 30_000 + k * 1000, text };
        });
        await storeMessages(harness, group.uuid, 'pia', rows);
      }
      const { runner, sent } = recordingRunner(harness.database);
      const request = { viewerId: 'pia', query: wordsOf('costword'), convId: null, filter: NO_CONDITIONS, after: null, size: 20, retention: keepAll() };
      const outcome = await postgresSearch.search(runner, request);
      if (outcome.kind !== 'hits') throw new Error('not found');
      const lastMatch = count - quiet;
      expect(outcome.hits.map((h) => `${h.message.convId}/${h.message.seq}`)).toEqual(convIds.slice(10).reverse().map((id) => `${id}/${lastMatch}`));
      expect(outcome.hasNextPage).toBe(true);
      const { rowsVisited } = await statementCost(harness.database, sent[0]!);
      // Each conversation's walk down to its newest match, each head
      // checked once, a probe for where the bar falls in the 20 above it,
      // and the page's rows read again to be served.
      expect(rowsVisited.message_bodies).toBeLessThanOrEqual(30 * (quiet + 2) + 2 * 21);
      expect(rowsVisited.messages).toBeLessThanOrEqual(30 + 20 + 2 * 21);
    });

    it('walks down a long conversation for a common word rather than reading all its matches', async () => {
      // One conversation of 1,500 messages, the word in every third but not
      // the newest 24: a page of 20 is in the newest 84 seqs, where the GIN
      // lookup reads all 492 matches.
      const rae = await harness.client('rae');
      const group = await createGroup(rae, ['bob']);
      const base = Date.now() - 2_000_000;
      const rows = Array.from({ length: 1500 }, (_, i) => {
        const seq = i + 1;
        return { seq, createdAt: base + seq * 1000, text: seq <= 1476 && seq % 3 === 0 ? `longword #${seq}` : `other #${seq}` };
      });
      await storeMessages(harness, group.uuid, 'rae', rows);
      for (const convId of [null, group.uuid]) {
        const { runner, sent } = recordingRunner(harness.database);
        const request = { viewerId: 'rae', query: wordsOf('longword'), convId, filter: NO_CONDITIONS, after: null, size: 20, retention: keepAll() };
        const outcome = await postgresSearch.search(runner, request);
        if (outcome.kind !== 'hits') throw new Error('not found');
        expect(outcome.hits.map((h) => h.message.seq)).toEqual(Array.from({ length: 20 }, (_, i) => 1476 - 3 * i));
        const { rowsVisited } = await statementCost(harness.database, sent[0]!);
        expect({ convId, bodies: rowsVisited.message_bodies! <= 24 + 3 * 21 + 2 * 21 }).toEqual({ convId, bodies: true });
      }
    });

    it('walks only the conversations the senders wrote in', async () => {
      // 20 conversations of 300 messages; olive wrote three messages of one.
      const sam = await harness.client('sam');
      const groups = [];
      for (let k = 0; k < 20; k += 1) {
        const group = await createGroup(sam, ['bob']);
        await seedMessages(harness, group.uuid, 'sam', 300);
        groups.push(group);
      }
      const olives = [30, 150, 270];
      await harness.database.db.execute(sql`update messages set sender_id = 'olive' where conv_id = ${groups[7]!.uuid}::uuid and seq = any(${sql.param(olives)}::int8[])`);
      const { runner, sent } = recordingRunner(harness.database);
      const request = { viewerId: 'sam', query: null, convId: null, filter: { ...NO_CONDITIONS, senderIds: ['olive'] }, after: null, size: 20, retention: keepAll() };
      const outcome = await postgresSearch.search(runner, request);
      expect(outcome.kind === 'hits' && outcome.hits.map((h) => h.message.seq)).toEqual([...olives].reverse());
      // At most the one conversation's messages, twice (its first hit, then the rest), where walking all of them reads 6,000.
      const { rowsVisited } = await statementCost(harness.database, sent[0]!);
      expect(rowsVisited.messages).toBeLessThanOrEqual(2 * 300);
    });

    it('reads what the condition names, not the conversation, when there are no words', async () => {
      // 3,000 messages, the last 40 sent an hour after the rest; three pinned, starred by bob and mentioning him; one thread.
      const group = await createGroup(alice, ['bob']);
      await seedMessages(harness, group.uuid, 'alice', 3000);
      await harness.database.db.execute(sql`update messages set created_at = created_at + interval '1 hour' where conv_id = ${group.uuid}::uuid and seq > 2960`);
      await harness.database.db.execute(sql`update messages set reply_to_seq = 2990, thread_root_seq = 2990 where conv_id = ${group.uuid}::uuid and seq = 2995`);
      const few = [40, 1200, 2950];
      for (const seq of few) {
        expect(codes(await alice.gql(PIN, { id: messageGlobalId(group.uuid, seq) }))).toEqual([]);
        expect(codes(await bob.gql(STAR, { id: messageGlobalId(group.uuid, seq) }))).toEqual([]);
        await mention(group.uuid, seq, ['bob']);
      }
      const [{ at }] = rowsOf<{ at: string }>(await harness.database.db.execute(sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
        from messages where conv_id = ${group.uuid}::uuid and seq = 2960`)) as [{ at: string }];
      const cases: [Partial<MessageFilter>, number[], number][] = [
        // Each candidate is read twice (found, then served); the rest are probes of a window's edge.
        [{ pinned: true }, [...few].reverse(), 10],
        [{ mentionsMe: true }, [...few].reverse(), 10],
        [{ starred: true }, [...few].reverse(), 10],
        [{ hasReplies: true }, [2990], 10],
        // The 40 messages after the instant: one probe of (conv_id, created_at, seq) finds where they start.
        [{ sentAfter: at }, Array.from({ length: 20 }, (_, i) => 3000 - i), 60],
      ];
      for (const [condition, seqs, most] of cases) {
        const { runner, sent } = recordingRunner(harness.database);
        const request = { viewerId: 'bob', query: null, convId: group.uuid, filter: { ...NO_CONDITIONS, ...condition }, after: null, size: 20, retention: keepAll() };
        const outcome = await postgresSearch.search(runner, request);
        expect({ condition, seqs: outcome.kind === 'hits' && outcome.hits.map((h) => h.message.seq) }).toEqual({ condition, seqs });
        const { rowsVisited } = await statementCost(harness.database, sent[0]!);
        expect({ condition, messages: rowsVisited.messages! <= most }).toEqual({ condition, messages: true });
      }
    });
  });

  describe('agrees with a model where conversations outrun the recent window', () => {
    // Conversations far longer than the first look (RECENT_WINDOW seqs),
    // creation times on whole seconds so conversations tie, and every kind
    // of condition sprinkled at random: senders, mentions of the viewer,
    // of everyone and of others, stars of the viewer and of others, pins,
    // threads whose replies the viewer may or may not see; hides, a clear,
    // revokes, and a conversation the viewer is not in. Every walk, at every
    // page size, must equal the model's order exactly, in full pages.
    type Stored = {
      convId: string;
      seq: number;
      createdAt: number;
      sender: string;
      text: string;
      mentions: string[];
      starredBy: string[];
      pinned: boolean;
      rootSeq: number | null;
      revoked: boolean;
    };
    const stored: Stored[] = [];
    const hidden = new Set<string>();
    const floors = new Map<string, number>();
    let mia: Client;
    let convIds: string[];
    let outside: string;
    const key = (convId: string, seq: number) => `${convId}/${seq}`;

    beforeAll(async () => {
      mia = await harness.client('mia');
      const noah = await harness.client('noah');
      const next = random(11);
      const hour = 3_600_000;
      const now = Math.floor(Date.now() / 1000) * 1000;
      // [messages, first message's age, last message's age, mia a member]
      const shapes: [number, number, number, boolean][] = [
        [140, 120_000, 0, true],
        [90, 6 * 24 * hour, 0, true],
        [70, 5 * 24 * hour, 3 * 24 * hour, true],
        [RECENT_WINDOW - 7, 2 * hour, hour, true],
        [40, 2 * hour, 0, false],
      ];
      convIds = [];
      for (const [count, from, to, miaIn] of shapes) {
        const group = await createGroup(noah, miaIn ? ['mia', 'olga'] : ['olga']);
        if (miaIn) convIds.push(group.uuid);
        else outside = group.uuid;
        const rows: Stored[] = [];
        for (let seq = 1; seq <= count; seq += 1) {
          const age = from - ((from - to) * (seq - 1)) / Math.max(1, count - 1);
          const roll = () => next();
          const sender = roll() < 0.25 ? 'mia' : roll() < 0.6 ? 'noah' : 'olga';
          const mentionRoll = roll();
          const mentions = mentionRoll < 0.1 ? ['mia'] : mentionRoll < 0.15 ? [''] : mentionRoll < 0.2 ? ['noah'] : mentionRoll < 0.22 ? ['noah', 'mia'] : [];
          const starredBy = [...(roll() < 0.12 ? ['mia'] : []), ...(roll() < 0.12 ? ['noah'] : [])];
          const roots = rows.filter((r) => r.rootSeq === null);
          const rootSeq = seq > 1 && roll() < 0.2 ? roots[Math.floor(roll() * roots.length)]!.seq : null;
          rows.push({
            convId: group.uuid,
            seq,
            createdAt: Math.floor((now - age) / 1000) * 1000,
            sender,
            text: `${roll() < 0.45 ? 'modelword' : 'filler'} #${seq}`,
            mentions,
            starredBy,
            pinned: roll() < 0.08,
            rootSeq,
            revoked: roll() < 0.03,
          });
        }
        stored.push(...rows);
        const column = <T>(pick: (r: Stored) => T) => sql.param(rows.map(pick));
        await harness.database.db.transaction(async (tx) => {
          await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at, reply_to_seq, thread_root_seq, revoked_at, revoked_by)
            select ${group.uuid}::uuid, r.seq, r.sender, 'model-' || r.seq, timestamptz 'epoch' + r.ms * interval '1 millisecond', r.root, r.root,
              case when r.revoked = 1 then now() end, case when r.revoked = 1 then r.sender end
            from unnest(${column((r) => r.seq)}::int8[], ${column((r) => r.sender)}::text[], ${column((r) => r.createdAt)}::int8[],
              ${column((r) => r.rootSeq)}::int8[], ${column((r) => (r.revoked ? 1 : 0))}::int8[]) as r(seq, sender, ms, root, revoked)`);
          // A revoked message has no body, pins or mentions (revokes.ts deletes them with it).
          const kept = rows.filter((r) => !r.revoked);
          await tx.execute(sql`insert into message_bodies (conv_id, seq, text, search_terms)
            select ${group.uuid}::uuid, r.seq, r.text, r.terms::tsvector
            from unnest(${sql.param(kept.map((r) => r.seq))}::int8[], ${sql.param(kept.map((r) => r.text))}::text[],
              ${sql.param(kept.map((r) => searchVector(group.uuid, r.text)))}::text[]) as r(seq, text, terms)`);
          const mentionRows = kept.flatMap((r) => r.mentions.map((userId, i) => ({ seq: r.seq, userId, position: userId === '' ? 0 : i + 1, ms: r.createdAt })));
          await tx.execute(sql`insert into message_mentions (conv_id, seq, user_id, position, sent_at)
            select ${group.uuid}::uuid, r.seq, r.user_id, r.position, timestamptz 'epoch' + r.ms * interval '1 millisecond'
            from unnest(${sql.param(mentionRows.map((r) => r.seq))}::int8[], ${sql.param(mentionRows.map((r) => r.userId))}::text[],
              ${sql.param(mentionRows.map((r) => r.position))}::int4[], ${sql.param(mentionRows.map((r) => r.ms))}::int8[]) as r(seq, user_id, position, ms)`);
          const starRows = rows.flatMap((r) => r.starredBy.map((userId) => ({ seq: r.seq, userId })));
          await tx.execute(sql`insert into message_stars (conv_id, seq, user_id)
            select ${group.uuid}::uuid, r.seq, r.user_id
            from unnest(${sql.param(starRows.map((r) => r.seq))}::int8[], ${sql.param(starRows.map((r) => r.userId))}::text[]) as r(seq, user_id)`);
          const pinned = kept.filter((r) => r.pinned).map((r) => r.seq);
          await tx.execute(sql`insert into message_pins (conv_id, seq, pinned_by) select ${group.uuid}::uuid, s, 'noah' from unnest(${sql.param(pinned)}::int8[]) as s`);
          await tx.execute(sql`update conversations set max_seq = ${count}, last_activity_at = timestamptz 'epoch' + ${rows.at(-1)!.createdAt}::int8 * interval '1 millisecond'
            where id = ${group.uuid}::uuid`);
        });
      }
      // Mia hides about one message in nine (replies among them, so some roots have replies only others see), and clears the long quiet conversation's first fifth.
      const hides = stored.filter((r, i) => r.convId !== outside && !r.revoked && i % 9 === 4);
      for (const r of hides) hidden.add(key(r.convId, r.seq));
      const ids = hides.map((r) => messageGlobalId(r.convId, r.seq));
      for (let i = 0; i < ids.length; i += 100) {
        const chunk = ids.slice(i, i + 100);
        expect((await mia.gql(DELETE_FOR_ME, { messageIds: chunk })).data.deleteMessagesForMe.deletedCount).toBe(chunk.length);
      }
      const cleared = convIds[1]!;
      await harness.database.db.execute(sql`update members set clear_seq = 18 where conv_id = ${cleared}::uuid and user_id = 'mia'`);
      floors.set(cleared, 18);
    });

    /** Whether mia may see `r` at all (revoked messages are shown, as placeholders, but never found). */
    const seen = (r: Stored) => r.convId !== outside && r.seq > (floors.get(r.convId) ?? 0) && !hidden.has(key(r.convId, r.seq));
    const times = () => {
      const sorted = stored.map((r) => r.createdAt).sort((a, b) => a - b);
      return { early: sorted[Math.floor(sorted.length * 0.3)]!, late: sorted[Math.floor(sorted.length * 0.85)]! };
    };

    /** The model: mia's hits for `word` (or none) and `filter`, newest first (time, then conversation id, then seq, all descending). */
    const expected = (word: string | null, filter: Record<string, unknown>, convId?: string): string[] => {
      const f = filter as { senderIds?: string[]; sentAfter?: string; sentBefore?: string; mentionsMe?: boolean; starred?: boolean; pinned?: boolean; hasReplies?: boolean };
      const is = (want: boolean | undefined, have: boolean) => want === undefined || want === have;
      return stored
        .filter((r) => seen(r) && !r.revoked && (convId === undefined || r.convId === convId))
        .filter((r) => word === null || indexLexemes(r.text).has(word))
        .filter((r) => f.senderIds === undefined || f.senderIds.includes(r.sender))
        .filter((r) => f.sentAfter === undefined || r.createdAt > Date.parse(f.sentAfter))
        .filter((r) => f.sentBefore === undefined || r.createdAt < Date.parse(f.sentBefore))
        .filter((r) => is(f.mentionsMe, r.sender !== 'mia' && (r.mentions.includes('mia') || r.mentions.includes(''))))
        .filter((r) => is(f.starred, r.starredBy.includes('mia')))
        .filter((r) => is(f.pinned, r.pinned))
        // As `replyCount` counts: replies mia can see, revoked ones included.
        .filter((r) => is(f.hasReplies, stored.some((x) => x.convId === r.convId && x.rootSeq === r.seq && seen(x))))
        .sort((a, b) => b.createdAt - a.createdAt || (a.convId < b.convId ? 1 : a.convId > b.convId ? -1 : b.seq - a.seq))
        .map((r) => messageGlobalId(r.convId, r.seq));
    };

    const filters = (): Record<string, unknown>[] => {
      const { early, late } = times();
      const iso = (ms: number) => new Date(ms).toISOString();
      return [
        { senderIds: ['olga'] },
        { senderIds: ['noah', 'olga'] },
        { sentAfter: iso(late) },
        { sentBefore: iso(early) },
        { sentAfter: iso(early), sentBefore: iso(late) },
        { mentionsMe: true },
        { mentionsMe: false },
        { starred: true },
        { starred: false },
        { pinned: true },
        { pinned: false },
        { hasReplies: true },
        { hasReplies: false },
        { senderIds: ['olga', 'noah'], mentionsMe: true, sentAfter: iso(early) },
        { pinned: true, starred: false },
        { starred: true, mentionsMe: false, senderIds: ['mia', 'noah'] },
        { hasReplies: true, senderIds: ['noah'], sentBefore: iso(late) },
        { pinned: false, starred: false, mentionsMe: false, hasReplies: false, sentAfter: iso(early) },
      ];
    };

    it('has a model where every filter lets through some hits and leaves out others', () => {
      const all = expected(null, {});
      for (const filter of filters()) {
        const want = expected(null, filter);
        expect({ filter, some: want.length > 0, notAll: want.length < all.length }).toEqual({ filter, some: true, notAll: true });
      }
      expect(new Set(all.map((id) => decodeMessageId(id)!.convId))).toEqual(new Set(convIds));
    });

    it.each([
      ['modelword', 20],
      ['modelword', 7],
      [null, 20],
      [null, 100],
    ] as const)('walks every filter with words %s in the model order, in full pages of %i', async (word, first) => {
      for (const filter of filters()) {
        const want = expected(word, filter);
        const { ids, pages } = await walk(mia, word === null ? { filter } : { query: word, filter }, first);
        expect({ filter, ids }).toEqual({ filter, ids: want });
        expect({ filter, pages }).toEqual({ filter, pages: fullPages(want.length, first) });
      }
    });

    it('walks the sparsest filters one hit a page', async () => {
      for (const filter of [{ pinned: true }, { mentionsMe: true, senderIds: ['olga'] }]) {
        const want = expected(null, filter);
        expect(want.length).toBeLessThan(40);
        expect(await walk(mia, { filter }, 1)).toEqual({ ids: want, pages: fullPages(want.length, 1) });
      }
    });

    it('walks one conversation narrowed, in the model order', async () => {
      for (const convId of [convIds[0]!, convIds[1]!, convIds[3]!]) {
        for (const filter of [{ starred: false }, { hasReplies: true }, { senderIds: ['noah'], pinned: false }]) {
          const { ids } = await walk(mia, { query: 'modelword', filter: { ...filter, conversationId: conversationGlobalId(convId) } }, 20);
          expect({ convId, filter, ids }).toEqual({ convId, filter, ids: expected('modelword', filter, convId) });
          const wordless = await walk(mia, { conversationId: conversationGlobalId(convId), filter }, 20);
          expect({ convId, filter, ids: wordless.ids }).toEqual({ convId, filter, ids: expected(null, filter, convId) });
        }
      }
    });
  });
});
