import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, type Harness, startHarness } from '../helpers/harness.ts';
import { createGroup, MESSAGES, send } from '../helpers/operations.ts';

describe.each(backends)('Operations: probes and request logs (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  /** Every log line the server wrote, parsed. */
  const lines: Record<string, unknown>[] = [];
  let readinessProblem: string | null = null;

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    harness = await startHarness(backend, {}, { logger, readiness: async () => readinessProblem });
    alice = await harness.client('alice');
  });
  afterAll(() => harness.close());

  const probe = async (path: string) => {
    const response = await fetch(new URL(path, harness.server.url));
    return { status: response.status, body: await response.json() };
  };

  it('answers /healthz while the process runs', async () => {
    expect(await probe('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers /readyz 200 when ready and 503 with the reason when not', async () => {
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
    readinessProblem = 'the database has 0 of 1 migrations';
    expect(await probe('/readyz')).toEqual({ status: 503, body: { status: 'unavailable', reason: 'the database has 0 of 1 migrations' } });
    readinessProblem = null;
  });

  it('logs one line per request with operation, statements, user and error codes, but no message text or token', async () => {
    const conv = await createGroup(alice, ['bob']);
    await send(alice, conv.id, 'a very private sentence');
    lines.length = 0;
    await alice.gql(MESSAGES, { id: conv.id, last: 5 });
    await alice.gql(MESSAGES, { id: 'no-such-conversation', last: 5 });
    const requests = lines.filter((line) => line.msg === 'graphql request');
    expect(requests.map(({ operation, statements, user, codes }) => ({ operation, statements, user, codes }))).toEqual([
      { operation: 'Page', statements: 1, user: 'alice', codes: [] },
      { operation: 'Page', statements: 0, user: 'alice', codes: ['NOT_FOUND'] },
    ]);
    expect(requests.every((line) => typeof line.ms === 'number')).toBe(true);
    const text = JSON.stringify(lines);
    expect(text).not.toContain('a very private sentence');
    expect(text).not.toContain(alice.token);
  });

  it('logs a request refused before it is GraphQL (bad JSON, wrong content type, too large) as one line with its status and code, no stack', async () => {
    lines.length = 0;
    await harness.post('{"query": ', { authorization: `Bearer ${alice.token}` });
    await harness.post('query { viewer { id } }', { 'content-type': 'text/plain' });
    await harness.post(JSON.stringify({ query: `{ viewer { id } } #${'x'.repeat(1024 * 1024)}` }));
    expect(lines.map(({ msg, method, status, code }) => ({ msg, method, status, code }))).toEqual([
      { msg: 'http request refused', method: 'POST', status: 400, code: 'BAD_REQUEST' },
      { msg: 'http request refused', method: 'POST', status: 400, code: 'BAD_REQUEST' },
      { msg: 'http request refused', method: 'POST', status: 413, code: 'PAYLOAD_TOO_LARGE' },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/stack|\s{4}at /);
  });
});

describe.each(backends)('In production mode (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;

  beforeAll(async () => {
    harness = await startHarness(backend, { NODE_ENV: 'production' });
    alice = await harness.client('alice');
  });
  afterAll(() => harness.close());

  it('answers resolver errors with their codes (not as internal errors)', async () => {
    const response = await alice.gql(MESSAGES, { id: 'no-such-conversation', last: 5 });
    expect(response.errors?.map((e) => e.extensions)).toEqual([{ code: 'NOT_FOUND' }]);
    const conv = await createGroup(alice, ['bob']);
    const bad = await alice.gql(MESSAGES, { id: conv.id, last: 500 });
    expect(bad.errors?.map((e) => e.extensions)).toEqual([{ code: 'BAD_USER_INPUT', argumentName: 'last' }]);
  });

  it('does not suggest field names that reveal the schema', async () => {
    const response = await alice.gql('{ viewer { idd } }');
    expect(response.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(response.text).not.toMatch(/Did you mean/);
  });
});
