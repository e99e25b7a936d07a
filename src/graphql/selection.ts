/**
 * Looking ahead at what a field's selection asks for, so a resolver can skip
 * a lookup nobody will read.
 */
import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';

/**
 * The names of the fields selected under the current field (through
 * fragments), or null when a directive could change the selection at run
 * time: callers must then assume everything is wanted.
 */
export function selectedFieldNames(info: GraphQLResolveInfo): Set<string> | null {
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined): boolean => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.directives && selection.directives.length > 0) return false;
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!visit(selection.selectionSet)) return false;
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = info.fragments[selection.name.value];
        if (fragment === undefined || fragment.directives?.length || !visit(fragment.selectionSet)) return false;
      }
    }
    return true;
  };
  for (const node of info.fieldNodes) if (!visit(node.selectionSet)) return null;
  return names;
}
