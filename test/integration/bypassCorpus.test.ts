/**
 * The bypass corpus: every limit the operation gate enforces, reached every
 * way a request can be shaped (plain, alias, inline fragment, named fragment,
 * nested fragments, variable, variable default, empty or missing operation
 * name, several operations, GET, WebSocket, batch). Each request must be
 * refused (with the limit's code, running no SQL) or, for rate limits,
 * counted (never more stored than the limit allows). The cases are generated
 * from two tables, limits and shapes, so a new shape is tried against every
 * limit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sha256Hex } from '../../src/graphql/trustedDocuments.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type GraphQLResponse, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { webSocketUrl } from '../helpers/liveClient.ts';
import { createGroup } from '../helpers/operations.ts';

/** A request as the client shapes it: the document, its variables and the operation name (undefined: left out). */
interface Shaped {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/**
 * A way of shaping a request around a root selection. `selection(mode)` is
 * the selection with its sizes written as literals, as `$n` (the variables
 * carry them), or as `$n` with the value as the variable's declared default.
 */
interface Shape {
  name: string;
  /** 'resolution': the shape selects no operation, so it is refused as such (unless validation refuses it first). */
  refusedAs?: 'resolution';
  transport: 'post' | 'get' | 'batch';
  build(root: 'query' | 'mutation', piece: Piece): Shaped | Shaped[];
}

/** What a limit puts at the root: the selection, and the variables it needs. */
interface Piece {
  selection(mode: 'literal' | 'variable' | 'default'): string;
  /** Variable definitions for `mode` (without parentheses), '' when none. */
  definitions(mode: 'literal' | 'variable' | 'default'): string;
  variables(mode: 'literal' | 'variable' | 'default'): Record<string, unknown>;
  /** The type the root selection is written on. */
  on: 'Query' | 'Mutation';
}

const defs = (d: string) => (d === '' ? '' : `(${d})`);

const SHAPES: Shape[] = [
  { name: 'plain', transport: 'post', build: (root, p) => ({ query: `${root}${defs(p.definitions('literal'))} { ${p.selection('literal')} }`, variables: p.variables('literal') }) },
  { name: 'alias', transport: 'post', build: (root, p) => ({ query: `${root}${defs(p.definitions('literal'))} { hidden: ${p.selection('literal')} }`, variables: p.variables('literal') }) },
  {
    name: 'inline fragment',
    transport: 'post',
    build: (root, p) => ({ query: `${root}${defs(p.definitions('literal'))} { ... on ${p.on} { ${p.selection('literal')} } }`, variables: p.variables('literal') }),
  },
  {
    name: 'named fragment',
    transport: 'post',
    build: (root, p) => ({
      query: `${root}${defs(p.definitions('literal'))} { ...F } fragment F on ${p.on} { ${p.selection('literal')} }`,
      variables: p.variables('literal'),
    }),
  },
  {
    name: 'nested fragments',
    transport: 'post',
    build: (root, p) => ({
      query: `${root}${defs(p.definitions('literal'))} { __typename ...A } fragment A on ${p.on} { ...B } fragment B on ${p.on} { ... on ${p.on} { ${p.selection('literal')} } }`,
      variables: p.variables('literal'),
    }),
  },
  { name: 'variable', transport: 'post', build: (root, p) => ({ query: `${root}${defs(p.definitions('variable'))} { ${p.selection('variable')} }`, variables: p.variables('variable') }) },
  { name: 'variable default', transport: 'post', build: (root, p) => ({ query: `${root}${defs(p.definitions('default'))} { ${p.selection('default')} }`, variables: p.variables('default') }) },
  {
    name: 'empty operation name',
    refusedAs: 'resolution',
    transport: 'post',
    build: (root, p) => ({ query: `${root}${defs(p.definitions('literal'))} { ${p.selection('literal')} }`, variables: p.variables('literal'), operationName: '' }),
  },
  {
    name: 'empty name on a named operation',
    refusedAs: 'resolution',
    transport: 'post',
    build: (root, p) => ({ query: `${root} Named${defs(p.definitions('literal'))} { ${p.selection('literal')} }`, variables: p.variables('literal'), operationName: '' }),
  },
  {
    name: 'several operations, none named in the request',
    refusedAs: 'resolution',
    transport: 'post',
    build: (root, p) => ({ query: `${root} Bad${defs(p.definitions('literal'))} { ${p.selection('literal')} } query Probe { __typename }`, variables: p.variables('literal') }),
  },
  {
    name: 'several operations, the bad one named',
    transport: 'post',
    build: (root, p) => ({
      query: `query Probe { __typename } ${root} Bad${defs(p.definitions('literal'))} { ${p.selection('literal')} }`,
      variables: p.variables('literal'),
      operationName: 'Bad',
    }),
  },
  {
    name: 'GET',
    transport: 'get',
    build: (root, p) => ({ query: `${root}${defs(p.definitions('variable'))} { ${p.selection('variable')} }`, variables: p.variables('variable') }),
  },
  {
    name: 'GET with an empty operation name',
    refusedAs: 'resolution',
    transport: 'get',
    build: (root, p) => ({ query: `${root}${defs(p.definitions('literal'))} { ${p.selection('literal')} }`, variables: p.variables('literal'), operationName: '' }),
  },
  {
    name: 'batch',
    transport: 'batch',
    build: (root, p) => [
      { query: `${root}${defs(p.definitions('literal'))} { ${p.selection('literal')} }`, variables: p.variables('literal') },
      { query: '{ __typename }' },
    ],
  },
];

/** A piece whose sizes are `sizes` (named n0, n1, ...) inside `template` (`#0`, `#1` mark where they go). */
function sized(on: Piece['on'], template: string, sizes: number[], extra: { definitions: string; variables: Record<string, unknown> } = { definitions: '', variables: {} }): Piece {
  const names = sizes.map((_, i) => `n${i}`);
  const join = (...parts: string[]) => parts.filter((p) => p !== '').join(', ');
  return {
    on,
    selection: (mode) => template.replace(/#(\d+)/g, (_, i) => (mode === 'literal' ? String(sizes[Number(i)]) : `$${names[Number(i)]}`)),
    definitions: (mode) =>
      join(extra.definitions, ...(mode === 'literal' ? [] : names.map((n, i) => (mode === 'default' ? `$${n}: Int = ${sizes[i]}` : `$${n}: Int`)))),
    variables: (mode) => ({ ...extra.variables, ...(mode === 'variable' ? Object.fromEntries(names.map((n, i) => [n, sizes[i]])) : {}) }),
  };
}

const fixed = (on: Piece['on'], selection: string, definitions = '', variables: Record<string, unknown> = {}): Piece => ({
  on,
  selection: () => selection,
  definitions: () => definitions,
  variables: () => variables,
});

/** Nested `depth` times: conversation -> messages -> node -> conversation ... */
function deep(levels: number): string {
  let selection = 'id';
  for (let i = 0; i < levels; i++) selection = `conversation { messages(last: 1) { edges { node { ${selection} } } } }`;
  return `message(id: "x") { ${selection} }`;
}

describe.each(backends)('Bypass corpus: no shape of request walks around a limit (%s)', (backend) => {
  let harness: Harness;
  let trusted: Harness;
  let alice: Client;
  let conv: { id: string; uuid: string };
  let nextUser = 0;
  const folder = mkdtempSync(join(tmpdir(), 'backscroll-bypass-'));
  const tally = { total: 0, held: 0 };

  /** Sends `shaped` over `transport` as `token` (null: no token). */
  async function send(transport: Shape['transport'], shaped: Shaped | Shaped[], token: string | null, on: Harness = harness): Promise<GraphQLResponse> {
    const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    if (transport === 'get') {
      const one = shaped as Shaped;
      const params: Record<string, string> = { query: one.query, variables: JSON.stringify(one.variables ?? {}) };
      if (one.operationName !== undefined) params.operationName = one.operationName;
      return on.get(params, { ...headers, 'apollo-require-preflight': 'true' });
    }
    return on.post(JSON.stringify(shaped), headers);
  }

  /** Records one corpus request's outcome; `held` when it was refused or counted as the limit requires. */
  function record(held: boolean): void {
    tally.total += 1;
    if (held) tally.held += 1;
  }

  beforeAll(async () => {
    harness = await startHarness(backend, {
      RATE_LIMIT_SEND_PER_SECOND: '1',
      RATE_LIMIT_SEND_BURST: '3',
      RATE_LIMIT_MUTATIONS_PER_SECOND: '1',
      RATE_LIMIT_MUTATIONS_BURST: '3',
      RATE_LIMIT_SUBSCRIBE_PER_SECOND: '1',
      RATE_LIMIT_SUBSCRIBE_BURST: '3',
      MAX_SOCKETS_PER_USER: '2',
    });
    alice = await harness.client('alice');
    conv = await createGroup(alice, ['bob']);
    await seedMessages(harness, conv.uuid, 'alice', 5);
    const manifest = join(folder, 'manifest.json');
    const listed = '{ __typename }';
    writeFileSync(manifest, JSON.stringify({ [`sha256:${sha256Hex(listed)}`]: listed }));
    trusted = await startHarness(backend, { TRUSTED_DOCUMENTS: manifest, TRUSTED_DOCUMENTS_ONLY: 'true', BACKSCROLL_INTROSPECTION: 'false' });
  });

  afterAll(async () => {
    await harness?.close();
    await trusted?.close();
    rmSync(folder, { recursive: true, force: true });
    console.log(`bypass corpus (${backend}): ${tally.held}/${tally.total} refused or counted`);
  });

  /** The read limits: what each puts at the root, the code it is refused with, and whether a token is sent. */
  const READ_LIMITS: { limit: string; code: string; piece: () => Piece; token: boolean }[] = [
    {
      limit: 'cost (nested message pages)',
      code: 'QUERY_TOO_COMPLEX',
      token: true,
      piece: () =>
        sized('Query', 'conversation(id: $id) { messages(last: #0) { edges { node { conversation { messages(last: #1) { startSeq } } } } } }', [100, 100], {
          definitions: '$id: ID!',
          variables: { id: conv.id },
        }),
    },
    {
      limit: 'cost (search hits times pages)',
      code: 'QUERY_TOO_COMPLEX',
      token: true,
      piece: () => sized('Query', 'search(query: "the", first: #0) { edges { node { conversation { messages(last: #1) { startSeq } } } } }', [100, 100]),
    },
    {
      limit: 'cost (lists other than messages)',
      code: 'QUERY_TOO_COMPLEX',
      token: true,
      piece: () => sized('Query', 'viewer { conversations(first: #0) { edges { node { changes(first: #1) { cursor } members(first: #2) { pageInfo { hasNextPage } } } } } }', [100, 500, 100]),
    },
    { limit: 'depth', code: 'GRAPHQL_VALIDATION_FAILED', token: true, piece: () => fixed('Query', deep(4)) },
    {
      limit: 'aliases',
      code: 'GRAPHQL_VALIDATION_FAILED',
      token: true,
      piece: () => fixed('Query', `viewer { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} }`),
    },
    {
      limit: 'directives',
      code: 'GRAPHQL_VALIDATION_FAILED',
      token: true,
      piece: () => fixed('Query', `viewer { ${Array.from({ length: 51 }, () => 'id @include(if: true)').join(' ')} }`),
    },
    { limit: 'authentication', code: 'UNAUTHENTICATED', token: false, piece: () => fixed('Query', 'viewer { id conversations { edges { cursor } } }') },
  ];

  for (const limit of READ_LIMITS) {
    for (const shape of SHAPES) {
      it(`refuses ${limit.limit} reached by ${shape.name}, running no SQL`, async () => {
        const response = await send(shape.transport, shape.build('query', limit.piece()), limit.token ? alice.token : null);
        const validation = limit.code === 'GRAPHQL_VALIDATION_FAILED';
        const expected = shape.transport === 'batch' ? 'BAD_REQUEST' : shape.refusedAs === 'resolution' && !validation ? 'OPERATION_RESOLUTION_FAILURE' : limit.code;
        const held = response.status >= 400 && codes(response)[0] === expected && response.data == null && response.stats.statements === 0;
        record(held);
        expect({ status: response.status >= 400, codes: codes(response), statements: response.stats.statements }).toEqual({
          status: true,
          codes: [expected],
          statements: 0,
        });
      });
    }
  }

  /** The mutation limits: each request shape sent past the burst must store no more than the burst. */
  const MUTATIONS = [
    {
      name: 'sendMessage',
      piece: (convId: string, n: number) =>
        fixed('Mutation', `sendMessage(input: { conversationId: $c, clientMsgId: "m${n}", text: "x" }) { message { seq } }`, '$c: ID!', { c: convId }),
    },
    { name: 'clearHistory', piece: (convId: string) => fixed('Mutation', 'clearHistory(input: { conversationId: $c }) { clearedThroughSeq }', '$c: ID!', { c: convId }) },
  ];
  const BURST = 3;

  for (const mutation of MUTATIONS) {
    for (const shape of SHAPES) {
      it(`counts ${mutation.name} reached by ${shape.name} against the rate limit (at most ${BURST} of ${BURST + 2} run)`, async () => {
        const user = await harness.client(`rate-${mutation.name}-${nextUser++}`);
        const own = await createGroup(user, []);
        const answers: GraphQLResponse[] = [];
        for (let n = 0; n < BURST + 2; n++) answers.push(await send(shape.transport, shape.build('mutation', mutation.piece(own.id, n)), user.token));
        const ran = answers.filter((a) => a.status === 200 && a.errors === undefined).length;
        const after = await user.gql('query ($id: ID!) { conversation(id: $id) { maxSeq } }', { id: own.id });
        const stored = after.data.conversation.maxSeq;
        // Refused before running: a refusal never stores (the empty name once answered 500 and stored).
        const refusedRan = answers.filter((a) => a.status >= 400 && a.stats.statements > 0).length;
        const sent = mutation.name === 'sendMessage' ? stored : ran;
        const held = ran <= BURST && refusedRan === 0 && (mutation.name !== 'sendMessage' || stored === ran);
        record(held);
        expect({ ranAtMostBurst: ran <= BURST, refusedRan, storedMatchesAnswers: mutation.name !== 'sendMessage' || stored === ran, sent: sent <= BURST }).toEqual({
          ranAtMostBurst: true,
          refusedRan: 0,
          storedMatchesAnswers: true,
          sent: true,
        });
        if (shape.refusedAs === 'resolution' || shape.transport !== 'post') expect(ran).toBe(0);
        else expect(answers.map((a) => codes(a)[0] ?? 'ok')).toEqual([...Array(BURST).fill('ok'), 'RATE_LIMITED', 'RATE_LIMITED']);
      });
    }
  }

  it('counts every aliased send in one request: 15 sends inside one fragment are refused whole past the burst', async () => {
    const user = await harness.client(`aliases-${nextUser++}`);
    const own = await createGroup(user, []);
    const sends = Array.from({ length: 15 }, (_, i) => `s${i}: sendMessage(input: { conversationId: $c, clientMsgId: "a${i}", text: "x" }) { message { seq } }`).join(' ');
    const response = await user.gql(`mutation ($c: ID!) { ...Sends } fragment Sends on Mutation { ${sends} }`, { c: own.id });
    const stored = (await user.gql('query ($id: ID!) { conversation(id: $id) { maxSeq } }', { id: own.id })).data.conversation.maxSeq;
    record(codes(response)[0] === 'RATE_LIMITED' && stored === 0);
    expect([codes(response), stored]).toEqual([['RATE_LIMITED'], 0]);
  });

  /** A subscribe over WebSocket: how it ended (errors with codes, a close code) or 'running'. */
  async function subscribeOnce(token: string | null, payload: Shaped, waitMs = 1500): Promise<{ codes: unknown[]; close: number | null }> {
    const client = createClient({
      url: webSocketUrl(harness.server.url),
      webSocketImpl: WebSocket,
      connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      lazy: true,
    });
    try {
      return await new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ codes: ['running'], close: null }), waitMs);
        client.subscribe(payload as { query: string }, {
          next: () => {},
          error: (error) => {
            clearTimeout(timer);
            const close = error as { code?: number };
            if (typeof close.code === 'number') resolve({ codes: [], close: close.code });
            // The first refusal is the one that decided it (validation may list several).
            else resolve({ codes: (error as { extensions?: { code?: string } }[]).slice(0, 1).map((e) => e.extensions?.code), close: null });
          },
          complete: () => {
            clearTimeout(timer);
            resolve({ codes: ['complete'], close: null });
          },
        });
      });
    } finally {
      await client.dispose();
    }
  }

  const EVENTS_DEEP = (n: string) =>
    `conversationEvents(conversationId: $c) { message { conversation { messages(last: ${n}) { edges { node { conversation { messages(last: ${n}) { startSeq } } } } } } } }`;
  const WS_CASES: { name: string; payload: () => Shaped; token: () => string | null; expected: { codes: unknown[]; close: number | null } }[] = [
    {
      name: 'cost with literal sizes',
      payload: () => ({ query: `subscription ($c: ID!) { ${EVENTS_DEEP('100')} }`, variables: { c: conv.id } }),
      token: () => 'user',
      expected: { codes: ['QUERY_TOO_COMPLEX'], close: null },
    },
    {
      name: 'cost through a variable default',
      payload: () => ({ query: `subscription S($c: ID!, $n: Int = 100) { ${EVENTS_DEEP('$n')} }`, variables: { c: conv.id } }),
      token: () => 'user',
      expected: { codes: ['QUERY_TOO_COMPLEX'], close: null },
    },
    {
      name: 'cost inside a named fragment',
      payload: () => ({ query: `subscription ($c: ID!) { ...E } fragment E on Subscription { ${EVENTS_DEEP('100')} }`, variables: { c: conv.id } }),
      token: () => 'user',
      expected: { codes: ['QUERY_TOO_COMPLEX'], close: null },
    },
    {
      name: 'an empty operation name',
      payload: () => ({ query: `subscription S($c: ID!) { conversationEvents(conversationId: $c) { seq } }`, variables: { c: conv.id }, operationName: '' }),
      token: () => 'user',
      expected: { codes: ['OPERATION_RESOLUTION_FAILURE'], close: null },
    },
    {
      name: 'a mutation',
      payload: () => ({ query: `mutation ($c: ID!) { clearHistory(input: { conversationId: $c }) { clearedThroughSeq } }`, variables: { c: conv.id } }),
      token: () => 'user',
      expected: { codes: ['BAD_REQUEST'], close: null },
    },
    {
      name: 'a mutation inside a fragment of a several-operation document',
      payload: () => ({
        query: `subscription A($c: ID!) { conversationEvents(conversationId: $c) { seq } } mutation B($c: ID!) { ...M } fragment M on Mutation { clearHistory(input: { conversationId: $c }) { clearedThroughSeq } }`,
        variables: { c: conv.id },
        operationName: 'B',
      }),
      token: () => 'user',
      expected: { codes: ['BAD_REQUEST'], close: null },
    },
    {
      name: 'depth',
      payload: () => ({ query: `subscription ($c: ID!) { conversationEvents(conversationId: $c) { message { ${deep(4)} } } }`, variables: { c: conv.id } }),
      token: () => 'user',
      expected: { codes: ['GRAPHQL_VALIDATION_FAILED'], close: null },
    },
    {
      name: 'no token',
      payload: () => ({ query: `subscription ($c: ID!) { conversationEvents(conversationId: $c) { seq } }`, variables: { c: conv.id } }),
      token: () => null,
      expected: { codes: [], close: 4401 },
    },
  ];

  for (const wsCase of WS_CASES) {
    it(`refuses over WebSocket: ${wsCase.name}`, async () => {
      // A user of its own, so no case waits on another's socket places.
      const user = await harness.client(`ws-${nextUser++}`);
      const outcome = await subscribeOnce(wsCase.token() === null ? null : user.token, wsCase.payload());
      record(JSON.stringify(outcome) === JSON.stringify(wsCase.expected));
      expect(outcome).toEqual(wsCase.expected);
    });
  }

  it('rate-limits subscribing over WebSocket: subscribe and complete in a loop is refused past the burst', async () => {
    const user = await harness.client(`churn-${nextUser++}`);
    const own = await createGroup(user, []);
    const outcomes = [];
    for (let i = 0; i < BURST + 2; i++) {
      outcomes.push((await subscribeOnce(user.token, { query: 'subscription ($c: ID!) { conversationEvents(conversationId: $c) { seq } }', variables: { c: own.id } }, 300)).codes[0]);
    }
    const held = outcomes.filter((o) => o === 'running').length <= BURST && outcomes.includes('RATE_LIMITED');
    record(held);
    expect(outcomes).toEqual([...Array(BURST).fill('running'), 'RATE_LIMITED', 'RATE_LIMITED']);
  });

  it('sums the cost of one socket’s subscriptions: two of 5,100 items per event each exceed 10,000 together', async () => {
    const user = await harness.client(`socket-cost-${nextUser++}`);
    const own = await createGroup(user, []);
    const client = createClient({ url: webSocketUrl(harness.server.url), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${user.token}` }, retryAttempts: 0, lazy: true });
    const heavy = { query: `subscription ($c: ID!) { ${EVENTS_DEEP('100').replace('messages(last: 100) { startSeq }', 'messages(last: 50) { startSeq }')} }`, variables: { c: own.id } };
    const outcome = (payload: typeof heavy) =>
      new Promise<unknown>((resolve) => {
        const timer = setTimeout(() => resolve('running'), 1000);
        client.subscribe(payload, {
          next: () => {},
          error: (errors) => {
            clearTimeout(timer);
            resolve((errors as { extensions?: { code?: string } }[])[0]?.extensions?.code);
          },
          complete: () => resolve('complete'),
        });
      });
    const outcomes = [await outcome(heavy), await outcome(heavy)];
    await client.dispose();
    record(outcomes[1] === 'QUERY_TOO_COMPLEX');
    expect(outcomes).toEqual(['running', 'QUERY_TOO_COMPLEX']);
  });

  it('holds a user to MAX_SOCKETS_PER_USER open sockets: the next is closed with 4429, and a socket closed gives its place back', async () => {
    const user = await harness.client(`sockets-${nextUser++}`);
    const own = await createGroup(user, []);
    const open = () =>
      createClient({ url: webSocketUrl(harness.server.url), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${user.token}` }, retryAttempts: 0, lazy: true });
    const events = { query: 'subscription ($c: ID!) { conversationEvents(conversationId: $c) { seq } }', variables: { c: own.id } };
    const held = [open(), open()];
    const connected = held.map((client) => new Promise<void>((resolve) => client.on('connected', () => resolve())));
    for (const client of held) client.subscribe(events, { next: () => {}, error: () => {}, complete: () => {} });
    await Promise.all(connected);
    const third = await subscribeOnce(user.token, events, 1000);
    await held[0]!.dispose();
    // The lease is dropped when the server sees the close; wait for that, not for a fixed time.
    await expect.poll(async () => (await subscribeOnce(user.token, events, 300)).codes[0], { timeout: 5000 }).toBe('running');
    await held[1]!.dispose();
    record(third.close === 4429);
    expect(third).toEqual({ codes: [], close: 4429 });
  });

  const TRUSTED_CASES: { name: string; send: () => Promise<GraphQLResponse>; code: string }[] = [
    { name: 'a free-form query over POST', send: () => send('post', { query: '{ viewer { id } }' }, alice.token, trusted), code: 'QUERY_NOT_IN_SAFELIST' },
    { name: 'a free-form query over GET', send: () => send('get', { query: '{ viewer { id } }' }, alice.token, trusted), code: 'QUERY_NOT_IN_SAFELIST' },
    {
      name: 'a query dressed as introspection through a fragment',
      send: () => send('post', { query: '{ __typename ...F } fragment F on Query { viewer { id } }' }, alice.token, trusted),
      code: 'QUERY_NOT_IN_SAFELIST',
    },
    {
      name: 'a query aliased as __typename',
      send: () => send('post', { query: '{ __typename: viewer { id } }' }, alice.token, trusted),
      code: 'QUERY_NOT_IN_SAFELIST',
    },
    { name: 'an unknown documentId', send: () => send('post', { documentId: `sha256:${'0'.repeat(64)}` } as unknown as Shaped, alice.token, trusted), code: 'PERSISTED_QUERY_NOT_IN_LIST' },
    {
      name: 'an unknown APQ hash with the query text attached',
      send: () =>
        trusted.post(JSON.stringify({ query: '{ viewer { id } }', extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex('{ viewer { id } }') } } }), {
          authorization: `Bearer ${alice.token}`,
        }),
      code: 'PERSISTED_QUERY_NOT_IN_LIST',
    },
    { name: 'a free-form mutation', send: () => send('post', { query: 'mutation { createConversation(input: { memberIds: [] }) { conversation { id } } }' }, alice.token, trusted), code: 'QUERY_NOT_IN_SAFELIST' },
  ];

  for (const trustedCase of TRUSTED_CASES) {
    it(`refuses under TRUSTED_DOCUMENTS_ONLY: ${trustedCase.name}`, async () => {
      const response = await trustedCase.send();
      const held = codes(response)[0] === trustedCase.code && response.stats.statements === 0;
      record(held);
      expect([codes(response), response.stats.statements]).toEqual([[trustedCase.code], 0]);
    });
  }
});
