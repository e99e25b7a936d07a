/**
 * The Backscroll-Consistency request header on every server, with or without
 * read replicas (test/postgres/readReplicas.test.ts runs them): a malformed
 * token is refused before anything runs, a good one is accepted, and pages
 * may read the header from a response (CORS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, startHarness, type Harness } from '../helpers/harness.ts';

const VIEWER = JSON.stringify({ query: '{ viewer { id } }' });

describe.each(backends)('The Backscroll-Consistency header (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
  });
  afterAll(() => harness.close());

  it('refuses a malformed token with BAD_USER_INPUT, naming the header, and runs no statement', async () => {
    const response = await harness.post(VIEWER, { authorization: `Bearer ${alice.token}`, 'backscroll-consistency': 'latest please' });
    expect([response.status, response.errors?.map((e) => e.extensions?.code), response.stats.statements]).toEqual([400, ['BAD_USER_INPUT'], 0]);
    expect(response.errors?.[0]?.message).toContain('Backscroll-Consistency');
  });

  it('accepts a well-formed token; without replicas every read is the primary, and no token is answered', async () => {
    const response = await fetch(harness.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.token}`, 'backscroll-consistency': '0/3000148' },
      body: VIEWER,
    });
    const body = (await response.json()) as { data?: unknown; extensions?: unknown };
    expect([response.status, body.data, response.headers.get('backscroll-consistency'), body.extensions]).toEqual([200, { viewer: { id: 'alice' } }, null, undefined]);
  });

  it('lets a page send the header and read it back (CORS)', async () => {
    const preflight = await fetch(harness.server.url, { method: 'OPTIONS' });
    expect(preflight.headers.get('access-control-allow-headers')).toContain('backscroll-consistency');
    expect(preflight.headers.get('access-control-expose-headers')).toBe('backscroll-consistency');
  });
});
