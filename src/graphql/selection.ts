/**
 * Looking ahead at what a field's selection asks for, so a resolver can skip
 * a lookup nobody will read.
 */
import { type FieldNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';

/** The fields a selection asks for, by name, with their nodes. */
type SelectedFields = Map<string, FieldNode[]>;

/** The fields selected in `selectionSets` (through fragments), or null when a directive could change them at run time. */
function fieldsIn(info: GraphQLResolveInfo, selectionSets: readonly (SelectionSetNode | undefined)[]): SelectedFields | null {
  const fields: SelectedFields = new Map();
  const seen = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined): boolean => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.directives && selection.directives.length > 0) return false;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        fields.set(name, [...(fields.get(name) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!visit(selection.selectionSet)) return false;
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = info.fragments[selection.name.value];
        if (fragment === undefined || fragment.directives?.length || !visit(fragment.selectionSet)) return false;
      }
    }
    return true;
  };
  for (const selectionSet of selectionSets) if (!visit(selectionSet)) return null;
  return fields;
}

/**
 * The names of the fields selected under the current field (through
 * fragments), or null when a directive could change the selection at run
 * time: callers must then assume everything is wanted.
 */
export function selectedFieldNames(info: GraphQLResolveInfo): Set<string> | null {
  const fields = fieldsIn(info, info.fieldNodes.map((node) => node.selectionSet));
  return fields === null ? null : new Set(fields.keys());
}

/**
 * The names of the fields selected under the current field's `child` (what
 * a connection's `edges` ask of each `node`), or null when a directive
 * could change either selection: callers must then assume everything is wanted.
 */
export function selectedChildFieldNames(info: GraphQLResolveInfo, child: string): Set<string> | null {
  const fields = fieldsIn(info, info.fieldNodes.map((node) => node.selectionSet));
  if (fields === null) return null;
  const childFields = fieldsIn(info, (fields.get(child) ?? []).map((node) => node.selectionSet));
  return childFields === null ? null : new Set(childFields.keys());
}
