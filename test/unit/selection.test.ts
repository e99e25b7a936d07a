import { type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type OperationDefinitionNode, parse, type FieldNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { selectedFieldNames, selectedFieldNamesAt } from '../../src/graphql/selection.ts';

/** What a resolver of `edges` would be given for `query`: the `edges` field nodes and the document's fragments. */
function edgesInfo(query: string): GraphQLResolveInfo {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const messages = operation.selectionSet.selections[0] as FieldNode;
  const edges = messages.selectionSet!.selections.filter((s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === 'edges');
  return { fieldNodes: edges, fragments } as unknown as GraphQLResolveInfo;
}

/** What a resolver of `messages` would be given for `query`. */
function messagesInfo(query: string): GraphQLResolveInfo {
  const document = parse(query);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  return { fieldNodes: [operation.selectionSet.selections[0] as FieldNode], fragments: {} } as unknown as GraphQLResolveInfo;
}

describe('selectedFieldNamesAt', () => {
  it('names what the edges ask of each node, directly, through fragments and across repeated fields', () => {
    expect(selectedFieldNamesAt(edgesInfo('{ messages { edges { cursor node { seq readCount } } } }'), ['node'])).toEqual(new Set(['seq', 'readCount']));
    expect(
      selectedFieldNamesAt(edgesInfo('{ messages { edges { node { ...M } node { id } } } } fragment M on Message { ... on Message { readCount } }'), ['node']),
    ).toEqual(new Set(['readCount', 'id']));
    expect(selectedFieldNamesAt(edgesInfo('{ messages { edges { ...E } } } fragment E on MessageEdge { node { n: readCount } }'), ['node'])).toEqual(
      new Set(['readCount']),
    );
  });

  it('answers an empty set when no node is asked for, and null when a directive could change either selection', () => {
    expect(selectedFieldNamesAt(edgesInfo('{ messages { edges { cursor } } }'), ['node'])).toEqual(new Set());
    expect(selectedFieldNamesAt(edgesInfo('query ($r: Boolean!) { messages { edges { node { readCount @include(if: $r) } } } }'), ['node'])).toBeNull();
    expect(selectedFieldNamesAt(edgesInfo('query ($r: Boolean!) { messages { edges { node @skip(if: $r) { readCount } } } }'), ['node'])).toBeNull();
  });

  it('follows a longer path: what a connection asks of its edges\' nodes', () => {
    expect(selectedFieldNamesAt(messagesInfo('{ messages { edges { node { seq readCount } } } }'), ['edges', 'node'])).toEqual(new Set(['seq', 'readCount']));
    expect(selectedFieldNamesAt(messagesInfo('{ messages { pageInfo { hasNextPage } } }'), ['edges', 'node'])).toEqual(new Set());
    expect(selectedFieldNamesAt(messagesInfo('query ($r: Boolean!) { messages { edges @include(if: $r) { node { readCount } } } }'), ['edges', 'node'])).toBeNull();
  });

  it('agrees with selectedFieldNames on the level it reads', () => {
    expect(selectedFieldNames(edgesInfo('{ messages { edges { cursor node { seq } } } }'))).toEqual(new Set(['cursor', 'node']));
  });
});
