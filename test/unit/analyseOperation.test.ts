import { readFileSync } from 'node:fs';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { getNamedType, getNullableType, type GraphQLObjectType, isListType, isObjectType, parse } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { analyseOperation } from '../../src/graphql/gate/analyseOperation.ts';
import { LIST_FIELDS } from '../../src/graphql/gate/listCost.ts';
import { LIST_SIZES } from '../../src/history/listSizes.ts';

const schema = makeExecutableSchema({ typeDefs: readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8') });

/** The analysis of `source` run as `operationName` with `variables`, or its refusal code. */
function analyse(source: string, variables: Record<string, unknown> = {}, operationName?: string | null) {
  const result = analyseOperation(schema, parse(source), operationName, variables);
  return result.ok ? result.analysis : { refused: result.code };
}
const cost = (source: string, variables?: Record<string, unknown>) => (analyse(source, variables) as { cost: number }).cost;

describe('The list-size table matches the schema', () => {
  it('declares, for every paged field, the default the schema declares', () => {
    const defaults = (coordinate: string, argument: string) => {
      const [typeName, fieldName] = coordinate.split('.');
      const field = (schema.getType(typeName!) as GraphQLObjectType).getFields()[fieldName!]!;
      return field.args.find((a) => a.name === argument)?.defaultValue;
    };
    expect({
      search: defaults('Query.search', 'first'),
      conversations: defaults('Viewer.conversations', 'first'),
      announcements: defaults('Viewer.announcements', 'first'),
      members: defaults('Conversation.members', 'first'),
      changes: defaults('Conversation.changes', 'first'),
      aroundBefore: defaults('Conversation.messagesAround', 'before'),
      aroundAfter: defaults('Conversation.messagesAround', 'after'),
      atBefore: defaults('Conversation.messagesAt', 'before'),
    }).toEqual({
      search: LIST_SIZES.search.default,
      conversations: LIST_SIZES.conversations.default,
      announcements: LIST_SIZES.announcements.default,
      members: LIST_SIZES.members.default,
      changes: LIST_SIZES.changes.default,
      aroundBefore: LIST_SIZES.aroundSide.default,
      aroundAfter: LIST_SIZES.aroundSide.default,
      atBefore: LIST_SIZES.aroundSide.default,
    });
  });

  it('counts every field of the schema that answers a connection, and the bounded lists of objects that hold lists', () => {
    const counted: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const named = getNamedType(field.type);
        // A plain list of objects that themselves answer connections (a
        // message's reaction groups, each with its users) multiplies what
        // those connections cost, so it must be counted too.
        const listOfPagedObjects =
          isListType(getNullableType(field.type)) && isObjectType(named) && Object.values(named.getFields()).some((f) => getNamedType(f.type).name.endsWith('Connection'));
        if (named.name.endsWith('Connection') || listOfPagedObjects) counted.push(`${type.name}.${field.name}`);
      }
    }
    expect(counted.sort()).toEqual(Object.keys(LIST_FIELDS).sort());
  });
});

describe('Operation analysis: selection by the spec', () => {
  it('selects the only operation when no name is given, and none for an empty name', () => {
    expect([analyse('query A { __typename }', {}, null), analyse('query A { __typename }', {}, '')]).toEqual([
      expect.objectContaining({ kind: 'query' }),
      { refused: 'OPERATION_RESOLUTION_FAILURE' },
    ]);
  });

  it('refuses a document of several operations without a name, and selects the named one', () => {
    const source = 'query A { __typename } mutation B { clearHistory(input: { conversationId: "c" }) { clearedThroughSeq } }';
    expect([analyse(source, {}, undefined), (analyse(source, {}, 'B') as { kind: string }).kind]).toEqual([{ refused: 'OPERATION_RESOLUTION_FAILURE' }, 'mutation']);
  });

  it('refuses variables that do not coerce, as BAD_USER_INPUT', () => {
    expect(analyse('query ($n: Int!) { __typename }', { n: 'many' })).toEqual({ refused: 'BAD_USER_INPUT' });
  });
});

describe('Operation analysis: cost', () => {
  it('counts a page by its size, the schema default when left out, and a jump by both sides and the anchor', () => {
    expect([
      cost('{ conversation(id: "x") { messages(last: 50) { startSeq } } }'),
      cost('{ conversation(id: "x") { messages { startSeq } } }'),
      cost('{ conversation(id: "x") { messagesAround(messageId: "m") { startSeq } } }'),
      cost('{ conversation(id: "x") { messages(around: "m") { startSeq } } }'),
      cost('{ conversation(id: "x") { messages(around: "m", first: 30) { startSeq } } }'),
      cost('{ conversation(id: "x") { messages(around: "m", last: 30, before: "c") { startSeq } } }'),
    ]).toEqual([50, 20, 41, 21, 31, 30]);
  });

  it('multiplies nested lists, whatever kind of list they are', () => {
    expect(cost('{ viewer { conversations(first: 10) { edges { node { members(first: 100) { pageInfo { hasNextPage } } changes { cursor } } } } } }')).toBe(
      10 + 10 * 100 + 10 * 100,
    );
  });

  it('counts sizes given by variables and by the defaults those variables declare', () => {
    const query = 'query ($a: Int = 100, $b: Int = 100) { search(query: "x", first: $a) { edges { node { conversation { messages(last: $b) { startSeq } } } } } }';
    expect([cost(query), cost(query, { a: 2, b: 3 }), cost(query, { a: null })]).toEqual([100 + 100 * 100, 2 + 2 * 3, 20 + 20 * 100]);
  });

  it('counts through inline and named fragments, and a fragment spread twice twice', () => {
    expect([
      cost('{ ... on Query { conversation(id: "x") { messages(last: 7) { startSeq } } } }'),
      cost('{ ...F ...G } fragment F on Query { conversation(id: "x") { messages(last: 7) { startSeq } } } fragment G on Query { ...F }'),
    ]).toEqual([7, 14]);
  });

  it('never counts a size past the maximum low: an over-large size counts as the maximum', () => {
    expect(cost('{ conversation(id: "x") { messages(last: 5000) { startSeq } } }')).toBe(LIST_SIZES.messages.max);
  });

  it('reads the variables of every request anew when one parsed document runs again, whichever of its operations runs', () => {
    // Apollo hands the gate the same parsed document for every request of one query text.
    const document = parse(`query Page($n: Int, $before: String) { conversation(id: "x") { messages(last: $n, before: $before) { startSeq } } }
      query Jump($m: ID!, $n: Int) { conversation(id: "x") { messages(around: $m, last: $n) { startSeq } ...Members } }
      fragment Members on Conversation { members(first: $n) { pageInfo { hasNextPage } } }`);
    const costs = [
      [{ n: 5 }, 'Page'],
      [{ n: 80, before: 'c' }, 'Page'],
      [{ m: 'm' }, 'Jump'],
      [{ m: 'm', n: 7 }, 'Jump'],
      [{}, 'Page'],
    ].map(([variables, name]) => {
      const result = analyseOperation(schema, document, name, variables);
      return result.ok ? result.analysis.cost : result.code;
    });
    expect(costs).toEqual([5, 80, 21 + LIST_SIZES.members.default, 7 + 1 + 7, LIST_SIZES.messages.default]);
  });

  it('stays linear on a fragment bomb', () => {
    const fragments = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ');
    const source = `{ ...F0 } ${fragments} fragment F30 on Query { search(query: "x", first: 1) { pageInfo { hasNextPage } } }`;
    // A walk that re-read each spread would take 2^30 steps and never finish here.
    expect(cost(source)).toBe(2 ** 30);
  });
});

describe('Operation analysis: root fields', () => {
  it('lists each execution by response key, through fragments, aliases counted', () => {
    const source = `mutation { a: clearHistory(input: { conversationId: "c" }) { clearedThroughSeq } ...M ... on Mutation { b: clearHistory(input: { conversationId: "c" }) { clearedThroughSeq } } }
      fragment M on Mutation { c: markRead(input: { conversationId: "c", seq: 1 }) { conversation { id } } }`;
    expect([...(analyse(source) as { rootFields: readonly string[] }).rootFields].sort()).toEqual(['clearHistory', 'clearHistory', 'markRead']);
  });
});
