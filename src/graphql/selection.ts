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
  return selectedFieldNamesAt(info, []);
}

/**
 * The names of the fields selected under the current field's `path` of
 * children (`['edges', 'node']`: what a connection's edges ask of each
 * node), merged across repeats and fragments, or null when a directive
 * could change any selection on the way: callers must then assume
 * everything is wanted.
 */
export function selectedFieldNamesAt(info: GraphQLResolveInfo, path: readonly string[]): Set<string> | null {
  let fields = fieldsIn(info, info.fieldNodes.map((node) => node.selectionSet));
  for (const child of path) {
    if (fields === null) return null;
    fields = fieldsIn(info, (fields.get(child) ?? []).map((node) => node.selectionSet));
  }
  return fields === null ? null : new Set(fields.keys());
}

/**
 * A test of whether the current field's `path` selects `name`, looked up
 * once per parsed query: documents are cached, so their field nodes are the
 * same objects request after request. Unknown (a directive) answers false:
 * callers that skip work on false must still answer the field without it.
 */
export function selectsOnce(path: readonly string[], name: string): (info: GraphQLResolveInfo) => boolean {
  const answers = new WeakMap<FieldNode, boolean>();
  return (info) => {
    const node = info.fieldNodes[0]!;
    let selects = answers.get(node);
    if (selects === undefined) {
      selects = selectedFieldNamesAt(info, path)?.has(name) === true;
      answers.set(node, selects);
    }
    return selects;
  };
}
