import { type DocumentNode, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { onlyIntrospects } from '../../src/graphql/gate/analyseOperation.ts';

/** Whether the first operation of `source` asks only for `__typename` and introspection. */
const introspectionOnly = (source: string, document: DocumentNode = parse(source)) => {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operation === undefined) throw new Error('the document has no operation');
  return onlyIntrospects(operation, document);
};

const ONLY_TYPENAME = '{ __typename }';
const SCHEMA = '{ __schema { queryType { name } types { name fields { name } } } }';
const TYPE = '{ __type(name: "Conversation") { name fields { name } } }';
const VIEWER = '{ viewer { id } }';

describe('onlyIntrospects: fields', () => {
  it('lets __typename alone through', () => {
    expect(introspectionOnly(ONLY_TYPENAME)).toBe(true);
  });

  it('lets __schema and __type through, whatever they select inside', () => {
    expect([introspectionOnly(SCHEMA), introspectionOnly(TYPE)]).toEqual([true, true]);
  });

  it('lets __typename, __schema and __type together through', () => {
    expect(introspectionOnly('{ __typename __schema { types { name } } __type(name: "Query") { name } }')).toBe(true);
  });

  it('lets __typename through on a mutation root', () => {
    expect(introspectionOnly('mutation Probe { __typename }')).toBe(true);
  });

  it('stops a real field alone', () => {
    expect(introspectionOnly(VIEWER)).toBe(false);
  });

  it('stops a real field mixed with __typename, whichever comes first', () => {
    expect([introspectionOnly('{ __typename viewer { id } }'), introspectionOnly('{ viewer { id } __typename }')]).toEqual([
      false,
      false,
    ]);
  });

  it('stops a real field mixed with __schema', () => {
    expect(introspectionOnly('{ __schema { types { name } } conversation(id: "x") { id } }')).toBe(false);
  });

  it('judges a field by its name, not its alias', () => {
    expect([introspectionOnly('{ health: __typename }'), introspectionOnly('{ __typename: viewer { id } }')]).toEqual([true, false]);
  });

  it('judges only the operation it is given, not others in the document', () => {
    const document = parse(`query Probe { __typename } query Secret { viewer { id } }`);
    const [probe, secret] = document.definitions as OperationDefinitionNode[];
    expect([onlyIntrospects(probe!, document), onlyIntrospects(secret!, document)]).toEqual([
      true,
      false,
    ]);
  });
});

describe('onlyIntrospects: inline fragments', () => {
  it('lets an inline fragment of introspection through, with or without a type condition', () => {
    expect([introspectionOnly('{ ... on Query { __typename } }'), introspectionOnly('{ ... { __schema { types { name } } } }')]).toEqual([
      true,
      true,
    ]);
  });

  it('stops a real field inside an inline fragment', () => {
    expect([introspectionOnly('{ ... on Query { viewer { id } } }'), introspectionOnly('{ __typename ... { __typename viewer { id } } }')]).toEqual([
      false,
      false,
    ]);
  });

  it('stops a real field inside nested inline fragments', () => {
    expect(introspectionOnly('{ ... on Query { ... { ... on Query { viewer { id } } } } }')).toBe(false);
  });
});

describe('onlyIntrospects: fragment spreads', () => {
  it('lets a spread of an introspection-only fragment through', () => {
    expect(introspectionOnly('{ ...Probe } fragment Probe on Query { __typename __schema { types { name } } }')).toBe(true);
  });

  it('stops a spread of a fragment with a real field', () => {
    expect(introspectionOnly('{ __typename ...Secret } fragment Secret on Query { viewer { id } }')).toBe(false);
  });

  it('stops a real field reached through a chain of spreads and inline fragments', () => {
    const source = `
      { ...A }
      fragment A on Query { __typename ... on Query { ...B } }
      fragment B on Query { __typename ...C }
      fragment C on Query { viewer { id } }`;
    expect(introspectionOnly(source)).toBe(false);
  });

  it('stops a spread of a fragment the document does not define', () => {
    expect(introspectionOnly('{ ...Missing }')).toBe(false);
  });

  it('stops a real field in a fragment spread twice', () => {
    expect(introspectionOnly('{ ...Secret ... on Query { ...Secret } } fragment Secret on Query { viewer { id } }')).toBe(false);
  });

  it('lets a fragment spread twice through when it is introspection only', () => {
    expect(introspectionOnly('{ ...Probe ... on Query { ...Probe } } fragment Probe on Query { __typename }')).toBe(true);
  });
});

describe('onlyIntrospects: recursive fragments', () => {
  // Validation rejects fragment cycles, but the check must not hang on one if asked first.
  it('terminates on a fragment that spreads itself, letting it through when the rest is introspection', () => {
    expect(introspectionOnly('{ ...Loop } fragment Loop on Query { __typename ...Loop }')).toBe(true);
  });

  it('terminates on a fragment that spreads itself and stops its real field', () => {
    expect(introspectionOnly('{ ...Loop } fragment Loop on Query { ...Loop viewer { id } }')).toBe(false);
  });

  it('terminates on two fragments that spread each other', () => {
    const cycle = (extra: string) => `{ ...A } fragment A on Query { __typename ...B } fragment B on Query { ...A ${extra} }`;
    expect([introspectionOnly(cycle('__typename')), introspectionOnly(cycle('viewer { id }'))]).toEqual([true, false]);
  });

  it('answers the same on a second call with the same document, keeping no memory between calls', () => {
    const document = parse('{ ...Secret } fragment Secret on Query { viewer { id } }');
    expect([introspectionOnly('', document), introspectionOnly('', document)]).toEqual([false, false]);
  });
});
