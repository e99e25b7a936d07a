/**
 * The most items a selection can answer, split in two: what the document
 * alone decides (which fields are paged, under which others, through which
 * fragments) is planned once per operation, and only the paged fields'
 * arguments are read per request, since variables can size them. Planning
 * walked every field of the document on every request, 2% of a page
 * request's CPU (`--cpu-prof`), for an answer that only variables change.
 *
 * Every paged field adds its size and multiplies everything below it; a
 * field that answers one object adds what is below it, so a plan keeps the
 * paged fields only, flattened through the rest and through inline
 * fragments. Named fragments stay named: each is planned once and costed
 * once per request, however often it is spread, so a fragment bomb stays
 * linear (spreading one twice counts it twice, which is never low).
 *
 * graphql is imported by its CommonJS entry, for the reason analyseOperation.ts gives.
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getNamedType,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type SelectionSetNode,
} from 'graphql/index.js';
import { LIST_FIELDS } from './listCost.ts';

/** A paged field: how many items its arguments ask for, and the plan of what each item selects. */
interface PagedField {
  field: GraphQLField<unknown, unknown>;
  selection: FieldNode;
  items: (args: Record<string, unknown>) => number;
  below: CostSet;
}

/** The paged fields a selection reaches without passing another paged field, and the named fragments it spreads. */
interface CostSet {
  paged: PagedField[];
  spreads: string[];
}

/** An operation's plan: its own selection's, and each named fragment's (null where the fragment cannot apply). */
export interface CostPlan {
  root: CostSet;
  fragments: ReadonlyMap<string, CostSet | null>;
}

/** Plans the cost of `selectionSet` on `rootType`, its named fragments being `fragments`. */
export function planCost(
  schema: GraphQLSchema,
  rootType: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
): CostPlan {
  const into = (set: CostSet, parentType: GraphQLCompositeType, selections: SelectionSetNode): CostSet => {
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name.startsWith('__') || !(isObjectType(parentType) || isInterfaceType(parentType))) continue;
        const field = parentType.getFields()[name];
        if (field === undefined) continue;
        const childType = getNamedType(field.type);
        const sub = selection.selectionSet && isCompositeType(childType) ? selection.selectionSet : null;
        const items = LIST_FIELDS[`${parentType.name}.${name}`];
        if (items) {
          set.paged.push({ field, selection, items, below: sub ? into(emptySet(), childType as GraphQLCompositeType, sub) : emptySet() });
        } else if (sub) {
          into(set, childType as GraphQLCompositeType, sub);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parentType;
        if (condition && isCompositeType(condition)) into(set, condition, selection.selectionSet);
      } else {
        set.spreads.push(selection.name.value);
      }
    }
    return set;
  };
  const planned = new Map<string, CostSet | null>();
  for (const [name, fragment] of fragments) {
    const condition = schema.getType(fragment.typeCondition.name.value);
    planned.set(name, condition && isCompositeType(condition) ? into(emptySet(), condition, fragment.selectionSet) : null);
  }
  return { root: into(emptySet(), rootType, selectionSet), fragments: planned };
}

const emptySet = (): CostSet => ({ paged: [], spreads: [] });

/** The most items `plan` answers with `variables` (coerced, defaults applied). */
export function costOf(plan: CostPlan, variables: Record<string, unknown>): number {
  const fragmentCost = new Map<string, number>();
  const inProgress = new Set<string>();
  const setCost = (set: CostSet): number => {
    let total = 0;
    for (const paged of set.paged) {
      let args: Record<string, unknown> = {};
      try {
        args = getArgumentValues(paged.field, paged.selection, variables);
      } catch {
        // Arguments the executor will refuse before resolving: count the defaults.
      }
      const items = paged.items(args);
      total += items + items * setCost(paged.below);
    }
    for (const name of set.spreads) total += spreadCost(name);
    return total;
  };
  const spreadCost = (name: string): number => {
    const known = fragmentCost.get(name);
    if (known !== undefined) return known;
    const set = plan.fragments.get(name);
    // Unknown or cyclic fragments fail validation before this runs; count nothing for them here.
    if (!set || inProgress.has(name)) return 0;
    inProgress.add(name);
    const cost = setCost(set);
    inProgress.delete(name);
    fragmentCost.set(name, cost);
    return cost;
  };
  return setCost(plan.root);
}
