/**
 * One reading of an operation, made the way the executor will run it, that
 * every limit is then decided from: the operation the spec selects, the
 * variables coerced with their declared defaults, the root fields it
 * executes (through inline and named fragments, aliases counted), whether it
 * only introspects, and the most items it can answer. Pure: schema, document
 * and request values in, a description or a refusal out.
 *
 * graphql is imported by its CommonJS entry, the copy @graphql-tools/schema
 * built the schema with: under vitest a bare 'graphql' import is a second
 * copy whose type checks reject the schema's types.
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getNamedType,
  getVariableValues,
  type GraphQLCompositeType,
  GraphQLError,
  type GraphQLSchema,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql/index.js';
import { LIST_FIELDS } from './listCost.ts';
import { selectOperation } from './selectOperation.ts';

/** What the gate knows of an operation before it runs. */
export interface OperationAnalysis {
  operation: OperationDefinitionNode;
  kind: 'query' | 'mutation' | 'subscription';
  /** Variables coerced by the schema, declared defaults applied: what resolvers will receive. */
  variables: Record<string, unknown>;
  /** The root field executed under each response key (each alias is one execution). */
  rootFields: string[];
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
  const variables = coerced.coerced;
  const fragments = fragmentsOf(document);
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return { ok: false, code: 'OPERATION_RESOLUTION_FAILURE', errors: [new GraphQLError(`This schema has no ${operation.operation} type.`)] };
  const rootFields = collectRootFields(operation.selectionSet, fragments);
  return {
    ok: true,
    analysis: {
      operation,
      kind: operation.operation,
      variables,
      rootFields: [...rootFields.values()],
      introspectionOnly: [...rootFields.values()].every((name) => name.startsWith('__')),
      cost: unitCost(schema, rootType, operation.selectionSet, fragments, variables),
    },
  };
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

/**
 * The most items `selectionSet` on `parentType` can answer once: every paged
 * field adds its size and multiplies everything below it. Linear in the
 * document: a named fragment's cost is worked out once and reused wherever it
 * is spread (spreading it twice counts it twice, which is never low).
 */
function unitCost(
  schema: GraphQLSchema,
  rootType: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  const fragmentCost = new Map<string, number>();
  const inProgress = new Set<string>();
  const walk = (parentType: GraphQLCompositeType, set: SelectionSetNode): number => {
    let total = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name.startsWith('__') || !(isObjectType(parentType) || isInterfaceType(parentType))) continue;
        const field = parentType.getFields()[name];
        if (field === undefined) continue;
        const listItems = LIST_FIELDS[`${parentType.name}.${name}`];
        let items = 1;
        if (listItems) {
          let args: Record<string, unknown> = {};
          try {
            args = getArgumentValues(field, selection, variables);
          } catch {
            // Arguments the executor will refuse before resolving: count the defaults.
          }
          items = listItems(args);
          total += items;
        }
        const childType = getNamedType(field.type);
        if (selection.selectionSet && isCompositeType(childType)) total += items * walk(childType, selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parentType;
        if (condition && isCompositeType(condition)) total += walk(condition, selection.selectionSet);
      } else {
        total += spreadCost(selection.name.value);
      }
    }
    return total;
  };
  const spreadCost = (name: string): number => {
    const known = fragmentCost.get(name);
    if (known !== undefined) return known;
    const fragment = fragments.get(name);
    // Unknown or cyclic fragments fail validation before this runs; count nothing for them here.
    if (fragment === undefined || inProgress.has(name)) return 0;
    const condition = schema.getType(fragment.typeCondition.name.value);
    if (!condition || !isCompositeType(condition)) return 0;
    inProgress.add(name);
    const cost = walk(condition, fragment.selectionSet);
    inProgress.delete(name);
    fragmentCost.set(name, cost);
    return cost;
  };
  return walk(rootType, selectionSet);
}
