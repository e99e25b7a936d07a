import { type FragmentDefinitionNode, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { operationCost } from '../../src/graphql/queryCost.ts';

/** The cost of the first operation in `source`. */
function cost(source: string, variables: Record<string, unknown> = {}): number {
  const document = parse(source);
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode;
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  return operationCost(operation.selectionSet, fragments, variables);
}

describe('Operation cost: messages a query could return', () => {
  it('counts nothing for a query without pages', () => {
    expect(cost('{ viewer { id } conversation(id: "x") { title } }')).toBe(0);
  });

  it('counts a page by its first or last, and 20 when neither is given', () => {
    expect([
      cost('{ conversation(id: "x") { messages(last: 50) { edges { cursor } } } }'),
      cost('{ conversation(id: "x") { messages(first: 7) { edges { cursor } } } }'),
      cost('{ conversation(id: "x") { messages { edges { cursor } } } }'),
    ]).toEqual([50, 7, 20]);
  });

  it('counts a jump as before + after + the anchor, 20 a side by default', () => {
    expect([
      cost('{ conversation(id: "x") { messagesAround(messageId: "m", before: 5, after: 0) { startSeq } } }'),
      cost('{ conversation(id: "x") { messagesAround(messageId: "m") { startSeq } } }'),
    ]).toEqual([6, 41]);
  });

  it('counts messages(around:) as both sides and the anchor, and as a plain page once a cursor overrides it', () => {
    expect([
      cost('{ conversation(id: "x") { messages(around: "m", first: 5, last: 3) { startSeq } } }'),
      cost('{ conversation(id: "x") { messages(around: "m") { startSeq } } }'),
      cost('{ conversation(id: "x") { messages(around: "m", first: 30) { startSeq } } }'),
      cost('{ conversation(id: "x") { messages(around: "m", last: 30, before: "c") { startSeq } } }'),
    ]).toEqual([9, 21, 31, 30]);
  });

  it('multiplies nested pages, the way GitHub counts nodes', () => {
    expect(
      cost('{ conversation(id: "x") { messages(last: 100) { edges { node { conversation { messages(last: 100) { startSeq } } } } } } }'),
    ).toBe(100 + 100 * 100);
  });

  it('multiplies the pages of each inbox conversation by the inbox page size, 20 by default, counting no conversation itself', () => {
    expect([
      cost('{ viewer { conversations(first: 100) { edges { node { messages(last: 100) { startSeq } } } } } }'),
      cost('{ viewer { conversations { edges { node { messagesAround(messageId: "m") { startSeq } } } } } }'),
      cost('{ viewer { conversations(first: 100) { edges { node { title lastMessage { seq } } } } } }'),
    ]).toEqual([100 * 100, 20 * 41, 0]);
  });

  it('reads page sizes from variables', () => {
    expect(cost('query ($n: Int) { conversation(id: "x") { messages(last: $n) { startSeq } } }', { n: 80 })).toBe(80);
  });

  it('counts every alias of a page separately', () => {
    expect(cost('{ conversation(id: "x") { a: messages(last: 100) { startSeq } b: messages(last: 100) { startSeq } } }')).toBe(200);
  });

  it('counts pages inside fragments, and a fragment spread twice twice', () => {
    expect(
      cost('query { conversation(id: "x") { ...P ... on Conversation { ...P } } } fragment P on Conversation { messages(last: 30) { startSeq } }'),
    ).toBe(60);
  });
});
