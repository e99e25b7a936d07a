import { type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type OperationDefinitionNode, parse, type FieldNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { selectedChildFieldNames, selectedFieldNames } from '../../src/graphql/selection.ts';

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

describe('selectedChildFieldNames', () => {
  it('names what the edges ask of each node, directly, through fragments and across repeated fields', () => {
    expect(selectedChildFieldNames(edgesInfo('{ messages { edges { cursor node { seq readCount } } } }'), 'node')).toEqual(new Set(['seq', 'readCount']));
    expect(
      selectedChildFieldNames(edgesInfo('{ messages { edges { node { ...M } node { id } } } } fragment M on Message { ... on Message { readCount } }'), 'node'),
    ).toEqual(new Set(['readCount', 'id']));
    expect(selectedChildFieldNames(edgesInfo('{ messages { edges { ...E } } } fragment E on MessageEdge { node { n: readCount } }'), 'node')).toEqual(
      new Set(['readCount']),
    );
  });

  it('answers an empty set when no node is asked for, and null when a directive could change either selection', () => {
    expect(selectedChildFieldNames(edgesInfo('{ messages { edges { cursor } } }'), 'node')).toEqual(new Set());
    expect(selectedChildFieldNames(edgesInfo('query ($r: Boolean!) { messages { edges { node { readCount @include(if: $r) } } } }'), 'node')).toBeNull();
    expect(selectedChildFieldNames(edgesInfo('query ($r: Boolean!) { messages { edges { node @skip(if: $r) { readCount } } } }'), 'node')).toBeNull();
  });

  it('agrees with selectedFieldNames on the level it reads', () => {
    expect(selectedFieldNames(edgesInfo('{ messages { edges { cursor node { seq } } } }'))).toEqual(new Set(['cursor', 'node']));
  });
});
