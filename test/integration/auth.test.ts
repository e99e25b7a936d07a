import { sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/rows.ts';
import { backends } from '../helpers/database.ts';
import { codes, type GraphQLResponse, type Harness, startHarness, TEST_SECRET } from '../helpers/harness.ts';

const VIEWER = '{ viewer { id } }';
const OPEN_DIRECT = 'mutation { openDirectConversation(userId: "bob") { conversation { id } } }';
const TYPENAME = '{ __typename }';
const INTROSPECTION = '{ __schema { queryType { name } } }';

const WRONG_SECRET = 'another-secret-that-is-also-at-least-32-characters';
const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs `claims` with `secret` and `alg`, adding nothing the caller did not ask for. */
function sign(claims: Record<string, unknown>, { secret = TEST_SECRET, alg = 'HS256' } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

/** Every way a request can fail to prove who it is, as the Authorization header it sends (undefined: none). */
async function badCredentials(): Promise<[string, string | undefined][]> {
  const valid = await sign({ sub: 'alice', exp: now() + 3600 });
  const [header, , signature] = valid.split('.');
  return [
    ['no Authorization header', undefined],
    ['"Bearer" alone', 'Bearer'],
    ['"Bearer " with nothing after it', 'Bearer '],
    ['a Basic header', 'Basic YWxpY2U6c2VjcmV0'],
    ['a token without the Bearer scheme', valid],
    ['a garbage token', 'Bearer not-a-jwt'],
    ['an expired token', `Bearer ${await sign({ sub: 'alice', exp: now() - 60 })}`],
    ['a token signed with another secret', `Bearer ${await sign({ sub: 'alice', exp: now() + 3600 }, { secret: WRONG_SECRET })}`],
    ['an alg: none token', `Bearer ${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: 'alice', exp: now() + 3600 })}.`],
    ['an HS512 token signed with the right secret', `Bearer ${await sign({ sub: 'alice', exp: now() + 3600 }, { alg: 'HS512' })}`],
    ['a token without sub', `Bearer ${await sign({ exp: now() + 3600 })}`],
    ['a token with an empty sub', `Bearer ${await sign({ sub: '', exp: now() + 3600 })}`],
    ['a token without exp', `Bearer ${await sign({ sub: 'alice' })}`],
    ['a token whose payload was swapped under a valid signature', `Bearer ${header}.${base64url({ sub: 'mallory', exp: now() + 3600 })}.${signature}`],
  ];
}

describe.each(backends)('Authenticates requests (%s)', (backend) => {
  let harness: Harness;
  let credentials: [string, string | undefined][];

  /** Posts `query` with `authorization`, and checks what no response may ever contain. */
  const post = async (query: string, authorization?: string, variables?: Record<string, unknown>): Promise<GraphQLResponse> =>
    postRaw(JSON.stringify({ query, variables }), authorization);
  const postRaw = async (body: string, authorization?: string): Promise<GraphQLResponse> => {
    const response = await harness.post(body, authorization === undefined ? {} : { authorization });
    expect(response.text).not.toContain('stacktrace');
    expect(response.text).not.toContain('    at ');
    return response;
  };
  const conversationCount = async (): Promise<number> =>
    rowsOf<{ n: number }>(await harness.database.db.execute(sql`select count(*)::int as n from conversations`))[0]!.n;

  beforeAll(async () => {
    harness = await startHarness(backend);
    credentials = await badCredentials();
  });
  afterAll(() => harness.close());

  describe('refuses a request that does not prove who it is', () => {
    it('with UNAUTHENTICATED and status 401 on a query, for every kind of bad credential', async () => {
      for (const [name, authorization] of credentials) {
        const response = await post(VIEWER, authorization);
        expect({ name, status: response.status, errors: response.errors, data: response.data ?? null }).toEqual({
          name,
          status: 401,
          errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }],
          data: null,
        });
      }
    });

    it('with UNAUTHENTICATED and status 401 on a mutation, for every kind of bad credential, writing nothing', async () => {
      for (const [name, authorization] of credentials) {
        const response = await post(OPEN_DIRECT, authorization);
        expect({ name, status: response.status, errors: response.errors, data: response.data ?? null }).toEqual({
          name,
          status: 401,
          errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }],
          data: null,
        });
      }
      expect(await conversationCount()).toBe(0);
    });

    it('as a whole, when an anonymous operation mixes introspection with real fields, directly or through fragments', async () => {
      const hidden = [
        '{ __typename viewer { id } }',
        '{ ... on Query { __typename viewer { id } } }',
        'query { ...Probe } fragment Probe on Query { __typename viewer { id } }',
        'query { ...A } fragment A on Query { __typename ...B } fragment B on Query { viewer { id } }',
      ];
      for (const query of hidden) {
        const response = await post(query);
        expect({ query, status: response.status, codes: codes(response), data: response.data ?? null }).toEqual({
          query,
          status: 401,
          codes: ['UNAUTHENTICATED'],
          data: null,
        });
      }
    });
  });

  describe('answers health probes and introspection without a valid token', () => {
    it('answers { __typename } anonymously and with any bad credential', async () => {
      for (const [name, authorization] of credentials) {
        const response = await post(TYPENAME, authorization);
        expect({ name, status: response.status, data: response.data, errors: response.errors }).toEqual({
          name,
          status: 200,
          data: { __typename: 'Query' },
          errors: undefined,
        });
      }
    });

    it('answers an introspection query anonymously and with any bad credential', async () => {
      for (const [name, authorization] of credentials) {
        const response = await post(INTROSPECTION, authorization);
        expect({ name, status: response.status, data: response.data, errors: response.errors }).toEqual({
          name,
          status: 200,
          data: { __schema: { queryType: { name: 'Query' } } },
          errors: undefined,
        });
      }
    });
  });

  describe('a valid token', () => {
    it.each(['user@example.com', 'alice', 'Ünïcode 用户 42', 'C:not-one-of-our-ids'])(
      'makes its sub %j the viewer id exactly as it is',
      async (sub) => {
        const token = await sign({ sub, exp: now() + 3600 });
        const response = await post(VIEWER, `Bearer ${token}`);
        expect({ status: response.status, data: response.data, errors: response.errors }).toEqual({
          status: 200,
          data: { viewer: { id: sub } },
          errors: undefined,
        });
      },
    );

    it('is accepted with a lower-case scheme', async () => {
      const token = await sign({ sub: 'alice', exp: now() + 3600 });
      const response = await post(VIEWER, `bearer ${token}`);
      expect(response.data).toEqual({ viewer: { id: 'alice' } });
    });
  });

  describe('errors', () => {
    it('never carry a stack trace, whatever kind of error it is', async () => {
      const token = `Bearer ${await sign({ sub: 'alice', exp: now() + 3600 })}`;
      const cases: [string, () => Promise<GraphQLResponse>, string][] = [
        ['unknown field', () => post('{ viewer { id nope } }', token), 'GRAPHQL_VALIDATION_FAILED'],
        ['unknown field, anonymous', () => post('{ nope }'), 'GRAPHQL_VALIDATION_FAILED'],
        ['parse error', () => post('{ viewer { id ', token), 'GRAPHQL_PARSE_FAILED'],
        ['parse error, anonymous', () => post('query {'), 'GRAPHQL_PARSE_FAILED'],
        ['variable of the wrong type', () => post('query ($id: ID!) { conversation(id: $id) { id } }', token, { id: { not: 'an id' } }), 'BAD_USER_INPUT'],
        ['invalid Seq literal', () => post('mutation { markRead(input: { conversationId: "x", seq: -1 }) { conversation { id } } }', token), 'GRAPHQL_VALIDATION_FAILED'],
        ['invalid argument', () => post('mutation { openDirectConversation(userId: "") { conversation { id } } }', token), 'BAD_USER_INPUT'],
        ['no such conversation', () => post('{ conversation(id: "nope") { id } }', token), 'NOT_FOUND'],
        ['expired token', () => post(VIEWER, credentials.find(([name]) => name === 'an expired token')![1]), 'UNAUTHENTICATED'],
        ['no query in the body', () => postRaw('{}', token), 'BAD_REQUEST'],
      ];
      for (const [name, run, code] of cases) {
        const response = await run();
        expect({ name, codes: codes(response) }).toEqual({ name, codes: [code] });
      }
    });

    it('answers a malformed JSON body with status 400 and a JSON errors body', async () => {
      const token = `Bearer ${await sign({ sub: 'alice', exp: now() + 3600 })}`;
      for (const authorization of [token, undefined]) {
        const response = await postRaw('{"query": "{ viewer { id } }"', authorization);
        expect(response.status).toBe(400);
        const body = JSON.parse(response.text);
        expect(body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'BAD_REQUEST' } }] });
      }
      const raw = await fetch(harness.server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'not json' });
      expect(raw.status).toBe(400);
      expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
    });
  });
});
