import { describe, expect, it } from 'vitest';
import { admit, admitHttpRequest, sha256Hex, type TrustedDocumentsPolicy } from '../../src/graphql/trustedDocuments.ts';

const LISTED = 'query Listed { viewer { id } }';
const OTHER = 'query Other { viewer { id conversations(first: 1) { edges { cursor } } } }';
const HASH = sha256Hex(LISTED);
const documents = new Map([[HASH, LISTED]]);
const ONLY: TrustedDocumentsPolicy = { only: true, introspection: false, maxTokens: 2000 };
const OPEN: TrustedDocumentsPolicy = { ...ONLY, only: false };
const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

const runs = (query: string | null) => ({ ok: true, query });
const refused = (code: string) => ({ ok: false, status: 400, code, message: expect.any(String) });

describe('Trusted documents: admit', () => {
  it('runs the listed document for documentId in either spelling and for its APQ hash', () => {
    expect([
      admit(documents, ONLY, { documentId: `sha256:${HASH}` }),
      admit(documents, ONLY, { documentId: HASH }),
      admit(documents, ONLY, { extensions: apq(HASH) }),
      admit(documents, ONLY, { extensions: apq(HASH), query: LISTED }),
    ]).toEqual([runs(LISTED), runs(LISTED), runs(LISTED), runs(LISTED)]);
  });

  it('refuses an id that is not listed, malformed, upper-case or not a string, under only', () => {
    const ids = [`sha256:${sha256Hex(OTHER)}`, 'sha256:abc', `sha256:${HASH.toUpperCase()}`, `md5:${HASH}`, 42, ''];
    expect(ids.map((documentId) => admit(documents, ONLY, { documentId }))).toEqual(ids.map(() => refused('PERSISTED_QUERY_NOT_IN_LIST')));
  });

  it('runs the listed document for a listed id whatever text comes with it, never that text', () => {
    expect(admit(documents, ONLY, { extensions: apq(HASH), query: OTHER })).toEqual(runs(LISTED));
  });

  it('runs free-form text only when it is a listed document, byte for byte, under only', () => {
    expect([
      admit(documents, ONLY, { query: LISTED }),
      admit(documents, ONLY, { query: `${LISTED}\n` }),
      admit(documents, ONLY, { query: OTHER }),
    ]).toEqual([runs(null), refused('QUERY_NOT_IN_SAFELIST'), refused('QUERY_NOT_IN_SAFELIST')]);
  });

  it('lets introspection through only when introspection is on, and only pure introspection', () => {
    const introspection = '{ __schema { types { name } } }';
    const withIntrospection = { ...ONLY, introspection: true };
    expect([
      admit(documents, ONLY, { query: introspection }),
      admit(documents, withIntrospection, { query: introspection }),
      admit(documents, withIntrospection, { query: '{ __typename viewer { id } }' }),
      admit(documents, withIntrospection, { query: 'mutation { __typename }' }),
      admit(documents, withIntrospection, { query: '{ __schema' }),
    ]).toEqual([refused('QUERY_NOT_IN_SAFELIST'), runs(null), refused('QUERY_NOT_IN_SAFELIST'), refused('QUERY_NOT_IN_SAFELIST'), refused('QUERY_NOT_IN_SAFELIST')]);
  });

  it('without only, passes free-form queries and unknown APQ hashes on to Apollo, but not unknown documentIds', () => {
    expect([
      admit(documents, OPEN, { query: OTHER }),
      admit(documents, OPEN, { extensions: apq(sha256Hex(OTHER)), query: OTHER }),
      admit(documents, OPEN, { extensions: apq(HASH) }),
      admit(documents, OPEN, { documentId: `sha256:${sha256Hex(OTHER)}` }),
    ]).toEqual([runs(null), runs(null), runs(LISTED), refused('PERSISTED_QUERY_NOT_IN_LIST')]);
  });

  it('leaves requests without a query or id to Apollo', () => {
    expect([admit(documents, ONLY, {}), admit(documents, ONLY, { query: 7 })]).toEqual([runs(null), runs(null)]);
  });
});

describe('Trusted documents: admitHttpRequest', () => {
  it('puts the document in the POST body in place of its id, keeping other extensions', () => {
    const body = { documentId: HASH, variables: { a: 1 }, operationName: 'Listed', extensions: { ...apq(HASH), trace: true } };
    expect(admitHttpRequest(documents, ONLY, { method: 'POST', body, search: '' })).toEqual({
      ok: true,
      body: { variables: { a: 1 }, operationName: 'Listed', query: LISTED, extensions: { trace: true } },
      search: '',
    });
  });

  it('puts the document in the GET query string in place of its id', () => {
    const search = `?documentId=sha256%3A${HASH}&variables=%7B%7D&extensions=${encodeURIComponent(JSON.stringify(apq(HASH)))}`;
    const admitted = admitHttpRequest(documents, ONLY, { method: 'GET', body: undefined, search });
    expect(admitted.ok && Object.fromEntries(new URLSearchParams(admitted.search))).toEqual({ variables: '{}', query: LISTED });
  });

  it('passes batches and non-JSON bodies untouched, for Apollo to refuse', () => {
    expect([
      admitHttpRequest(documents, ONLY, { method: 'POST', body: [{ query: OTHER }], search: '' }),
      admitHttpRequest(documents, ONLY, { method: 'POST', body: 'query { x }', search: '' }),
    ]).toEqual([
      { ok: true, body: [{ query: OTHER }], search: '' },
      { ok: true, body: 'query { x }', search: '' },
    ]);
  });
});
