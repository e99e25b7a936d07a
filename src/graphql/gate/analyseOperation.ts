/**
 * One reading of an operation, made the way the executor will run it, that
 * every limit is then decided from: the operation the spec selects, the
 * variables coerced with their declared defaults, the root fields it
 * executes (through inline and named fragments, aliases counted), whether it
 * only introspects, and the most items it can answer. Pure: schema, document
 * and request values in, a description or a refusal out. What the document
 * alone decides is read once per parsed operation (Apollo keeps parsed
 * documents, so a client's repeated query is the same object); only the
 * variables are read per request.
 *
 * graphql is imported by its CommonJS entry, the copy @graphql-tools/schema
 * built the schema with: under vitest a bare 'graphql' import is a second
 * copy whose type checks reject the schema's types.
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getVariableValues,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql/index.js';
import { type CostPlan, costOf, planCost } from './costPlan.ts';
import { selectOperation } from './selectOperation.ts';

/** What the gate knows of an operation before it runs. */
export interface OperationAnalysis {
  operation: OperationDefinitionNode;
  kind: 'query' | 'mutation' | 'subscription';
  /** Variables coerced by the schema, declared defaults applied: what resolvers will receive. */
  variables: Record<string, unknown>;
  /** The root field executed under each response key (each alias is one execution). */
  rootFields: readonly string[];
  /** Only `__typename`, `__schema` and `__type` at the root. */
  introspectionOnly: boolean;
  /** The most list items (messages, conversations, members, changes, ...) the operation can answer. */
  cost: number;
}

export type AnalysisResult =
  | { ok: true; analysis: OperationAnalysis }
  | { ok: false; code: 'OPERATION_RESOLUTION_FAILURE' | 'BAD_USER_INPUT'; errors: GraphQLError[] };

/** Reads `document` as the executor will run it with `operationName` and `rawVariables`. */
export function analyseOperation(schema: GraphQLSchema, document: DocumentNode, operationName: unknown, rawVariables: unknown): AnalysisResult {
  const selected = selectOperation(document, operationName);
  if (!selected.ok) return { ok: false, code: 'OPERATION_RESOLUTION_FAILURE', errors: [new GraphQLError(selected.message)] };
  const operation = selected.operation;
  const inputs = typeof rawVariables === 'object' && rawVariables !== null && !Array.isArray(rawVariables) ? (rawVariables as Record<string, unknown>) : {};
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], inputs, { maxErrors: 20 });
  if (coerced.errors) return { ok: false, code: 'BAD_USER_INPUT', errors: [...coerced.errors] };
  const shape = shapeOf(schema, document, operation);
  if (shape === null) return { ok: false, code: 'OPERATION_RESOLUTION_FAILURE', errors: [new GraphQLError(`This schema has no ${operation.operation} type.`)] };
  const variables = coerced.coerced;
  return {
    ok: true,
    analysis: {
      operation,
      kind: operation.operation,
      variables,
      rootFields: shape.rootFields,
      introspectionOnly: shape.introspectionOnly,
      cost: costOf(shape.cost, variables),
    },
  };
}

/** What an operation's document alone decides: the same for every request that runs it. */
interface OperationShape {
  rootFields: readonly string[];
  introspectionOnly: boolean;
  cost: CostPlan;
}

/** Shapes by schema, then by operation node: both live as long as what holds them (the server, Apollo's document cache). */
const shapes = new WeakMap<GraphQLSchema, WeakMap<OperationDefinitionNode, OperationShape | null>>();

/** The shape of `operation` in `document`, read once; null when the schema has no root type for it. */
function shapeOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): OperationShape | null {
  let bySchema = shapes.get(schema);
  if (bySchema === undefined) shapes.set(schema, (bySchema = new WeakMap()));
  const known = bySchema.get(operation);
  if (known !== undefined) return known;
  const rootType = schema.getRootType(operation.operation);
  let shape: OperationShape | null = null;
  if (rootType) {
    const fragments = fragmentsOf(document);
    const rootFields = [...collectRootFields(operation.selectionSet, fragments).values()];
    shape = {
      rootFields,
      introspectionOnly: rootFields.every((name) => name.startsWith('__')),
      cost: planCost(schema, rootType, operation.selectionSet, fragments),
    };
  }
  bySchema.set(operation, shape);
  return shape;
}

const fragmentsOf = (document: DocumentNode) =>
  new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));

/** Whether `operation` asks only for `__typename`, `__schema` and `__type` at its root (through fragments). */
export function onlyIntrospects(operation: OperationDefinitionNode, document: DocumentNode): boolean {
  return [...collectRootFields(operation.selectionSet, fragmentsOf(document)).values()].every((name) => name.startsWith('__'));
}

/**
 * The root fields by response key, the way the executor collects them: into
 * inline fragments and each named fragment once. `@skip`/`@include` are not
 * applied: a field they leave out is still counted, never the reverse.
 */
function collectRootFields(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): Map<string, string> {
  const fields = new Map<string, string>();
  const visited = new Set<string>();
  const visit = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (!fields.has(key)) fields.set(key, selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        // Undefined fragments fail validation; until then, never read one as "only introspection".
        if (fragment) visit(fragment.selectionSet);
        else fields.set(`...${selection.name.value}`, `...${selection.name.value}`);
      }
    }
  };
  visit(selectionSet);
  return fields;
}
