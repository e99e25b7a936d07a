import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import {
  AUDIENCE,
  BAD_INPUT_CORPUS,
  type BadInputCase,
  CATEGORIES,
  type CorpusFixtures,
  EDIT,
  EDITS,
  ISSUER,
  type RawRequest,
  REACT,
  REACTORS,
  REPLY,
  signClaims,
  type ThreadFixtures,
} from '../helpers/badInputCorpus.ts';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup, MESSAGES, REVOKE, send as sendMessage } from '../helpers/operations.ts';

/** What a client that follows the GraphQL-over-HTTP draft sends. */
const ACCEPT = 'application/graphql-response+json, application/json;q=0.9';

/** Every table, fingerprinted as its row count and an md5 of its rows in a fixed order. */
const TABLES = [
  'conversations',
  'members',
  'messages',
  'message_bodies',
  'message_hide_ranges',
  'conversation_changes',
  'message_edits',
  'message_reactions',
  'thread_reads',
  'message_stars',
  'message_pins',
  'message_mentions',
];

/** Reactions the rule accepts (test/unit/reaction.test.ts has the rest), each added and removed again through the server. */
const ACCEPTED_REACTIONS = ['👍', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '❤', '❤️', ':+1:', ':party_parrot:'];
const UNREACT = 'mutation ($m: ID!, $r: String!) { removeReaction(input: { messageId: $m, reaction: $r }) { message { reactions { reaction } } } }';
const REACTIONS = 'query ($m: ID!) { message(id: $m) { reactions { reaction count reactedByMe } } }';

/** What would give a stack trace or a source path away. */
const STACK_MARKS = [/ {4}at /, /\.[cm]?[jt]sx?:\d/, /node_modules/, /file:\/\//, /stacktrace/i];

const JSON_CONTENT_TYPE = /^application\/(graphql-response\+)?json\b/;

/** A response body as GraphQL-over-HTTP shapes it. */
interface ResponseBody {
  data?: unknown;
  errors?: { message?: unknown; extensions?: { code?: unknown; argumentName?: unknown } }[];
}

/** `text` parsed as a JSON object, or undefined when it is not one. */
function parseJson(text: string): ResponseBody | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ResponseBody) : undefined;
  } catch {
    return undefined;
  }
}

/** What an answer looked like on the wire. */
interface RawAnswer {
  status: number;
  contentType: string;
  text: string;
}

async function send(url: string, request: RawRequest): Promise<RawAnswer> {
  const headers = { accept: ACCEPT, ...request.headers };
  const init: RequestInit & { duplex?: 'half' } = { method: request.method, headers, body: request.body as BodyInit | undefined };
  // A streamed body needs half duplex in Node's fetch.
  if (request.body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(`${url}${request.search ?? ''}`, init);
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

/** Whether `value` holds nothing but nulls (a resolver refused before any content was read). */
function onlyNulls(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every(onlyNulls);
}

/** `response`'s data, or a thrown error when it has errors: for setting fixtures up. */
function dataOf(response: { data?: any; errors?: unknown[] }): any {
  if (response.errors) throw new Error(JSON.stringify(response.errors));
  return response.data;
}

/** A thread group of `alice`'s with bob, its messages all sent by her: see `ThreadFixtures`. */
async function threadFixtures(alice: Client): Promise<ThreadFixtures> {
  const conv = await createGroup(alice, ['bob']);
  const root = await sendMessage(alice, conv.id, 'the root, first version');
  dataOf(await alice.gql(EDIT, { m: root.id, text: 'the root' }));
  const replyId = dataOf(await alice.gql(REPLY, { c: conv.id, m: root.id })).sendMessage.message.id as string;
  const revoked = await sendMessage(alice, conv.id, 'to be revoked');
  dataOf(await alice.gql(REVOKE, { messageId: revoked.id }));
  const full = await sendMessage(alice, conv.id, 'twenty reactions');
  for (let i = 0; i < 20; i++) dataOf(await alice.gql(REACT, { m: full.id, r: `:reaction_${i}:` }));
  for (const id of [root.id, replyId]) dataOf(await alice.gql(REACT, { m: id, r: '👍' }));
  const edits = dataOf(await alice.gql(EDITS, { m: root.id })).message.edits.edges;
  const groups = dataOf(await alice.gql(REACTORS, { m: root.id })).message.reactions;
  return {
    convId: conv.id,
    convUuid: conv.uuid,
    rootId: root.id,
    rootSeq: root.seq,
    replyId,
    revokedId: revoked.id,
    fullId: full.id,
    editCursor: edits[0].cursor,
    reactorCursor: groups[0].users.edges[0].cursor,
  };
}

/** A client whose token carries the issuer and audience this server requires. */
async function corpusClient(harness: Harness, userId: string): Promise<Client> {
  const token = await signClaims({ sub: userId, iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 });
  const authorization = `Bearer ${token}`;
  return {
    userId,
    token,
    gql: (query, variables) => harness.post(JSON.stringify({ query, variables }), { authorization }),
  };
}

describe('The bad input corpus', () => {
  it('has at least 60 distinct cases and covers every category', () => {
    const names = BAD_INPUT_CORPUS.map((c) => `${c.category}: ${c.name}`);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(60);
    expect(new Set(BAD_INPUT_CORPUS.map((c) => c.category))).toEqual(new Set(CATEGORIES));
  });
});

describe.each(backends)('Answers malformed and hostile requests with a coded error and changes nothing (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let fixtures: CorpusFixtures;
  let fingerprintBefore: unknown;
  let pageBefore: unknown;
  const clean = new Set<string>();
  let attempted = 0;

  const fingerprint = async () => {
    const parts = TABLES.map(
      (table) =>
        sql`select ${table} as table, count(*)::int as rows, md5(coalesce(string_agg(t::text, E'\n' order by t::text), '')) as digest from ${sql.identifier(table)} t`,
    );
    return rowsOf(await harness.database.db.execute(sql.join(parts, sql` union all `)));
  };
  const newestPage = async () => {
    const response = await alice.gql(MESSAGES, { id: fixtures.convId, last: 3 });
    return { status: response.status, data: response.data, errors: response.errors };
  };

  beforeAll(async () => {
    harness = await startHarness(backend, { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
    alice = await corpusClient(harness, 'alice');
    const mallory = await corpusClient(harness, 'mallory');
    const conv = await createGroup(alice, ['bob']);
    const other = await createGroup(alice, ['carol']);
    const foreign = await createGroup(mallory, ['eve']);
    await seedMessages(harness, conv.uuid, 'bob', 30);
    await seedMessages(harness, other.uuid, 'carol', 5);
    await seedMessages(harness, foreign.uuid, 'eve', 5);
    const firstPage = async (client: Client, id: string) => {
      const response = await client.gql(MESSAGES, { id, first: 2 });
      if (response.errors) throw new Error(JSON.stringify(response.errors));
      return response.data.conversation.messages as { edges: { cursor: string; node: { id: string } }[] };
    };
    const convPage = await firstPage(alice, conv.id);
    fixtures = {
      member: `Bearer ${alice.token}`,
      outsider: `Bearer ${mallory.token}`,
      convId: conv.id,
      messageId: convPage.edges[0]!.node.id,
      cursor: convPage.edges[1]!.cursor,
      otherCursor: (await firstPage(alice, other.id)).edges[1]!.cursor,
      foreignCursor: (await firstPage(mallory, foreign.id)).edges[1]!.cursor,
      thread: await threadFixtures(alice),
    };
    fingerprintBefore = await fingerprint();
    pageBefore = await newestPage();
  });

  afterAll(async () => {
    console.log(`bad input (${backend}): ${clean.size}/${attempted} clean`);
    await harness?.close();
  });

  it('serves the seeded page the corpus checks against after each case', () => {
    expect(pageBefore).toEqual({
      status: 200,
      data: {
        conversation: {
          messages: expect.objectContaining({
            edges: [28, 29, 30].map((seq) => ({
              cursor: expect.any(String),
              node: { id: expect.any(String), seq, sender: { id: 'bob' }, content: { __typename: 'TextContent', text: `message ${seq}` } },
            })),
          }),
        },
      },
      errors: undefined,
    });
  });

  it.each(BAD_INPUT_CORPUS.map((c) => [`${c.category}: ${c.name} answers ${c.status} ${c.code}`, c] as const))(
    '%s, leaks no stack or data, and leaves the server serving and the database unchanged',
    async (_label, badCase: BadInputCase) => {
      attempted += 1;
      // Compared with the state just before this case, so a case that writes fails alone.
      const tablesBefore = await fingerprint();
      const answer = await send(harness.server.url, await badCase.request(fixtures));
      const body = parseJson(answer.text);
      const named = (argumentName: unknown) => (badCase.argumentName === undefined ? {} : { argumentName });
      expect({
        status: answer.status,
        code: body?.errors?.[0]?.extensions?.code,
        ...named(body?.errors?.[0]?.extensions?.argumentName),
        jsonContentType: JSON_CONTENT_TYPE.test(answer.contentType),
        everyErrorWordedAndCoded: body?.errors?.every((e) => /\S/.test(String(e.message ?? '')) && typeof e.extensions?.code === 'string') ?? false,
        stackMarks: STACK_MARKS.filter((mark) => mark.test(answer.text)).map(String),
        // Before execution there is no data at all; once a resolver refused, only nulls.
        dataWhereNoneBelongs: body !== undefined && 'data' in body && (answer.status !== 200 || !onlyNulls(body.data)),
        tables: await fingerprint(),
        newestPage: await newestPage(),
      }).toEqual({
        status: badCase.status,
        code: badCase.code,
        ...named(badCase.argumentName),
        jsonContentType: true,
        everyErrorWordedAndCoded: true,
        stackMarks: [],
        dataWhereNoneBelongs: false,
        tables: tablesBefore,
        newestPage: pageBefore,
      });
      clean.add(`${badCase.category}: ${badCase.name}`);
    },
  );

  it('ends the corpus with every table exactly as seeded', async () => {
    expect(await fingerprint()).toEqual(fingerprintBefore);
  });

  it('accepts every kind of reaction the rule accepts, stores each once in its emoji spelling (❤ as ❤️), and removes it again', async () => {
    const message = await sendMessage(alice, fixtures.thread.convId, 'react to me');
    const added = [];
    for (const reaction of ACCEPTED_REACTIONS) added.push(await alice.gql(REACT, { m: message.id, r: reaction }));
    expect(added.map((response) => response.errors)).toEqual(ACCEPTED_REACTIONS.map(() => undefined));
    // ❤ and ❤️ are one reaction: alice's second is already there.
    const stored = ACCEPTED_REACTIONS.filter((reaction) => reaction !== '❤');
    expect(dataOf(await alice.gql(REACTIONS, { m: message.id })).message.reactions).toEqual(
      stored.map((reaction) => ({ reaction, count: 1, reactedByMe: true })),
    );
    const removed = [];
    for (const reaction of ACCEPTED_REACTIONS) removed.push(await alice.gql(UNREACT, { m: message.id, r: reaction }));
    expect(removed.map((response) => response.errors)).toEqual(ACCEPTED_REACTIONS.map(() => undefined));
    expect(removed.at(-1)!.data.removeReaction.message.reactions).toEqual([]);
  });
});
