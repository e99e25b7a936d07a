/**
 * Trusted documents over HTTP and WebSocket, with a manifest in the format
 * GraphQL Code Generator's client preset writes (`persistedDocuments: true`),
 * and automatic persisted queries when there is no manifest.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex, trustedDocumentsGate } from '../../src/graphql/trustedDocuments.ts';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, startHarness } from '../helpers/harness.ts';
import { liveClient, untilLive } from '../helpers/liveClient.ts';
import { CREATE_GROUP, createGroup, SEND, send } from '../helpers/operations.ts';

const TITLE = 'query Title($id: ID!) { conversation(id: $id) { id title } }';
const EVENTS = 'subscription Events($id: ID!) { conversationEvents(conversationId: $id) { kind seq } }';
const UNLISTED = 'query Unlisted($id: ID!) { conversation(id: $id) { id title maxSeq } }';
const INTROSPECTION = '{ __schema { queryType { name } } }';

const folder = mkdtempSync(join(tmpdir(), 'backscroll-trusted-'));
/**
 * The client preset's manifest: ids `sha256:<hex>`; one entry in bare hex, as
 * older tools write it. The tests' own setup operations are listed too, so
 * the shared helpers run as they are.
 */
const manifestPath = join(folder, 'persisted-documents.json');
const listed = [TITLE, CREATE_GROUP, SEND];
writeFileSync(
  manifestPath,
  JSON.stringify({ ...Object.fromEntries(listed.map((d) => [`sha256:${sha256Hex(d)}`, d])), [sha256Hex(EVENTS)]: EVENTS }, null, 2),
);

const apq = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256Hex(query) } });

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe.each(backends)('Trusted documents only (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let conv: { id: string };
  const post = (body: Record<string, unknown>) => harness.post(JSON.stringify(body), { authorization: `Bearer ${alice.token}` });
  const titleData = () => ({ conversation: { id: conv.id, title: 'trusted' } });

  beforeAll(async () => {
    harness = await startHarness(backend, { TRUSTED_DOCUMENTS: manifestPath, TRUSTED_DOCUMENTS_ONLY: 'true', BACKSCROLL_INTROSPECTION: 'false' });
    alice = await harness.client('alice');
    conv = await createGroup(alice, [], 'trusted');
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('runs a listed operation named by its APQ hash', async () => {
    const response = await post({ extensions: apq(TITLE), variables: { id: conv.id } });
    expect([response.status, response.data, response.errors]).toEqual([200, titleData(), undefined]);
  });

  it('runs a listed operation named by documentId, over POST and over GET', async () => {
    const byPost = await post({ documentId: `sha256:${sha256Hex(TITLE)}`, variables: { id: conv.id } });
    const search = new URLSearchParams({ documentId: `sha256:${sha256Hex(TITLE)}`, variables: JSON.stringify({ id: conv.id }) });
    const byGet = await fetch(`${harness.server.url}?${search}`, {
      headers: { authorization: `Bearer ${alice.token}`, 'apollo-require-preflight': 'true' },
    });
    expect([byPost.status, byPost.data, byPost.errors]).toEqual([200, titleData(), undefined]);
    expect([byGet.status, await byGet.json()]).toEqual([200, { data: titleData() }]);
  });

  it('runs a listed document sent as text, byte for byte', async () => {
    const response = await post({ query: TITLE, variables: { id: conv.id } });
    expect([response.status, response.data]).toEqual([200, titleData()]);
  });

  it('refuses a free-form query that is not in the manifest, with 400 and no data', async () => {
    const response = await post({ query: UNLISTED, variables: { id: conv.id } });
    // A listed document with one more space is another document.
    const respaced = await post({ query: TITLE.replace('{ id', '{  id'), variables: { id: conv.id } });
    expect([response.status, response.data, codes(response)]).toEqual([400, undefined, ['QUERY_NOT_IN_SAFELIST']]);
    expect([respaced.status, codes(respaced)]).toEqual([400, ['QUERY_NOT_IN_SAFELIST']]);
  });

  it('refuses an unknown document id, and never registers a query sent with its hash', async () => {
    const unknownId = await post({ documentId: `sha256:${sha256Hex(UNLISTED)}`, variables: { id: conv.id } });
    const register = await post({ query: UNLISTED, extensions: apq(UNLISTED), variables: { id: conv.id } });
    const again = await post({ extensions: apq(UNLISTED), variables: { id: conv.id } });
    expect([unknownId, register, again].map((r) => [r.status, codes(r)])).toEqual([
      [400, ['PERSISTED_QUERY_NOT_IN_LIST']],
      [400, ['PERSISTED_QUERY_NOT_IN_LIST']],
      [400, ['PERSISTED_QUERY_NOT_IN_LIST']],
    ]);
  });

  it('refuses introspection while BACKSCROLL_INTROSPECTION is off', async () => {
    const response = await harness.post(JSON.stringify({ query: INTROSPECTION }));
    expect([response.status, codes(response)]).toEqual([400, ['QUERY_NOT_IN_SAFELIST']]);
  });

  it('refuses an unlisted subscription over WebSocket and runs a listed one', async () => {
    const live = liveClient(harness.server.url, { authorization: `Bearer ${alice.token}` });
    try {
      const unlisted = live.subscribe('subscription { conversationEvents(conversationId: "x") { seq } }');
      expect(await unlisted.ended).toEqual({ kind: 'errors', errors: [expect.objectContaining({ extensions: { code: 'QUERY_NOT_IN_SAFELIST' } })] });
      const listed = live.subscribe(EVENTS, { id: conv.id });
      await untilLive(listed, async () => (await send(alice, conv.id, 'poke')).seq);
    } finally {
      await live.dispose();
    }
  });
});

describe.each(backends)('Trusted documents with introspection on (%s)', (backend) => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(backend, { TRUSTED_DOCUMENTS: manifestPath, TRUSTED_DOCUMENTS_ONLY: 'true', BACKSCROLL_INTROSPECTION: 'true' });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('lets unlisted introspection through, and nothing else', async () => {
    const introspection = await harness.post(JSON.stringify({ query: INTROSPECTION }));
    const mixed = await harness.post(JSON.stringify({ query: '{ __schema { queryType { name } } viewer { id } }' }));
    expect([introspection.status, introspection.data]).toEqual([200, { __schema: { queryType: { name: 'Query' } } }]);
    expect([mixed.status, codes(mixed)]).toEqual([400, ['QUERY_NOT_IN_SAFELIST']]);
  });
});

describe.each(backends)('Automatic persisted queries without a manifest (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('answers PERSISTED_QUERY_NOT_FOUND for an unknown hash, registers it with its query, then runs it by hash', async () => {
    const conv = await createGroup(alice, [], 'apq');
    const post = (body: Record<string, unknown>) => harness.post(JSON.stringify(body), { authorization: `Bearer ${alice.token}` });
    const hashOnly = { extensions: apq(UNLISTED), variables: { id: conv.id } };
    const first = await post(hashOnly);
    const register = await post({ ...hashOnly, query: UNLISTED });
    const byHash = await post(hashOnly);
    const data = { conversation: { id: conv.id, title: 'apq', maxSeq: 0 } };
    expect([first.status, codes(first)]).toEqual([200, ['PERSISTED_QUERY_NOT_FOUND']]);
    expect([register.status, register.data, byHash.status, byHash.data]).toEqual([200, data, 200, data]);
  });

  it('runs any free-form query', async () => {
    const response = await alice.gql('{ viewer { id } }');
    expect(response.data).toEqual({ viewer: { id: 'alice' } });
  });
});

describe('Trusted documents: the manifest', () => {
  const gate = (content: string) => {
    const path = join(folder, `m-${Math.random()}.json`);
    writeFileSync(path, content);
    return () => trustedDocumentsGate({ trustedDocuments: { path, only: true }, introspection: false, queryLimits: { tokens: 2000 } as never });
  };

  it('refuses to start on an id that is not the sha256 of its document, a file that is not JSON, or a missing file', () => {
    expect(gate(JSON.stringify({ [`sha256:${sha256Hex('query A { a }')}`]: 'query B { b }' }))).toThrow(/sha256 of its document/);
    expect(gate(JSON.stringify({ 'a1b2c3': '{ a }' }))).toThrow(/sha256 of its document/);
    expect(gate('not json')).toThrow(/readable JSON file/);
    expect(() => trustedDocumentsGate({ trustedDocuments: { path: join(folder, 'missing.json'), only: true }, introspection: false, queryLimits: { tokens: 2000 } as never })).toThrow(/readable JSON file/);
  });
});
