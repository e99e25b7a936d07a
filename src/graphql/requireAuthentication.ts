/**
 * An Apollo plugin that refuses a whole operation without a valid token
 * before anything runs, unless the operation only asks for `__typename` and
 * introspection (health probes, Sandbox, codegen against a live server).
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { type DocumentNode, Kind, type SelectionSetNode } from 'graphql';
import type { RequestContext } from './context.ts';
import { unauthenticated } from './errors.ts';

/** Whether a root selection set asks only for `__typename`, `__schema` and `__type`. */
export function onlyIntrospection(selectionSet: SelectionSetNode, document: DocumentNode, seen = new Set<string>()): boolean {
  return selectionSet.selections.every((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__');
    if (selection.kind === Kind.INLINE_FRAGMENT) return onlyIntrospection(selection.selectionSet, document, seen);
    const name = selection.name.value;
    if (seen.has(name)) return true;
    seen.add(name);
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name);
    return fragment?.kind === Kind.FRAGMENT_DEFINITION && onlyIntrospection(fragment.selectionSet, document, seen);
  });
}

export const requireAuthentication: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ contextValue, operation, document }) {
        if (contextValue.auth.kind === 'user') return;
        if (operation && onlyIntrospection(operation.selectionSet, document)) return;
        throw unauthenticated(
          contextValue.auth.kind === 'invalid'
            ? contextValue.auth.reason
            : 'This operation needs an `Authorization: Bearer <token>` header.',
        );
      },
    };
  },
};
