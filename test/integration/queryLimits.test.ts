import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/database.ts';
import { type Client, codes, type Harness, seedMessages, startHarness } from '../helpers/harness.ts';
import { createGroup, PAGE_FIELDS } from '../helpers/operations.ts';

describe.each(backends)('Refuses operations that ask for too much, before they run (%s)', (backend) => {
  let harness: Harness;
  let alice: Client;
  let conv: { id: string; uuid: string };

  beforeAll(async () => {
    harness = await startHarness(backend);
    alice = await harness.client('alice');
    conv = await createGroup(alice, ['bob']);
    await seedMessages(harness, conv.uuid, 'alice', 120);
  });
  afterAll(() => harness.close());

  it('serves the largest ordinary page: 100 messages with every field', async () => {
    const response = await alice.gql(`query ($id: ID!) { conversation(id: $id) { messages(last: 100) { ${PAGE_FIELDS} } } }`, { id: conv.id });
    expect(response.errors).toBeUndefined();
    expect(response.data.conversation.messages.edges).toHaveLength(100);
  });

  it('refuses nested pages that could return more than 10,000 messages with QUERY_TOO_COMPLEX, running no SQL', async () => {
    const response = await alice.gql(
      `query ($id: ID!, $n: Int) { conversation(id: $id) { messages(last: $n) { edges { node { conversation { messages(last: $n) { startSeq } } } } } } }`,
      { id: conv.id, n: 100 },
    );
    expect(response.status).toBe(400);
    expect(response.errors).toEqual([
      { message: expect.stringContaining('10100'), extensions: { code: 'QUERY_TOO_COMPLEX', cost: 10100, limit: 10000 } },
    ]);
    expect(response.data).toBeUndefined();
    expect(response.stats.statements).toBe(0);
  });

  it('refuses an alias bomb', async () => {
    const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: viewer { id }`).join(' ');
    expect(codes(await alice.gql(`{ ${aliases} }`))).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it('refuses a query nested deeper than 12 levels', async () => {
    let selection = 'id';
    for (let i = 0; i < 4; i++) selection = `conversation { messages(last: 1) { edges { node { ${selection} } } } }`;
    const response = await alice.gql(`query ($id: ID!) { message(id: $id) { ${selection} } }`, { id: 'x' });
    expect(codes(response)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it('refuses a document of more than 2,000 tokens as a parse failure', async () => {
    const fields = Array.from({ length: 2100 }, () => '__typename').join(' ');
    expect(codes(await alice.gql(`{ viewer { ${fields} } }`))).toEqual(['GRAPHQL_PARSE_FAILED']);
  });

  it('refuses more than 50 directives', async () => {
    // One directive on each of 51 selections (a directive may appear only once per selection).
    const selections = Array.from({ length: 51 }, () => '__typename @include(if: true)').join(' ');
    expect(codes(await alice.gql(`{ viewer { ${selections} } }`))).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  });

  it('still answers the introspection query Sandbox and codegen send', async () => {
    const response = await harness.post(
      JSON.stringify({ query: '{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name } } } } } } } }' }),
    );
    expect(response.errors).toBeUndefined();
  });
});
