/**
 * Which operation of a document a request runs, by the GraphQL spec's
 * GetOperation rule: with no name (null or left out), the document's only
 * operation; with a name, the operation of exactly that name. An empty
 * string is a name like any other, so it selects nothing (anonymous
 * operations have no name): the executor is then told to run no operation,
 * never "the only one", which is how an empty name once slipped past every
 * check that looked for an operation and found none.
 */
import { type DocumentNode, Kind, type OperationDefinitionNode } from 'graphql';

export type OperationSelection = { ok: true; operation: OperationDefinitionNode } | { ok: false; message: string };

/** The operation `operationName` selects from `document`, or why none is selected. */
export function selectOperation(document: DocumentNode, operationName: unknown): OperationSelection {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName === null || operationName === undefined) {
    if (operations.length === 1) return { ok: true, operation: operations[0]! };
    return {
      ok: false,
      message: operations.length === 0 ? 'The document has no operation to run.' : 'The document has several operations: name the one to run with `operationName`.',
    };
  }
  if (typeof operationName !== 'string') return { ok: false, message: '`operationName` must be a string.' };
  const named = operations.filter((o) => o.name?.value === operationName);
  if (named.length === 1) return { ok: true, operation: named[0]! };
  return { ok: false, message: `The document has no operation named ${JSON.stringify(operationName).slice(0, 90)}.` };
}
