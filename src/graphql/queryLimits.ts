/**
 * Limits on what one operation may ask for, checked before it runs: depth,
 * aliases and directives with GraphQL Armor, tokens by graphql-js's own
 * parser limit (Armor's token plugin parses every new document a second
 * time and reports syntax errors as validation failures), and our own cost
 * rule (`queryCost.ts`), which knows how page sizes multiply.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, Kind, type FragmentDefinitionNode, type ValidationRule } from 'graphql';
import type { Config } from '../config.ts';
import type { RequestContext } from './context.ts';
import { operationCost } from './queryCost.ts';

/** The Apollo plugins and validation rules that enforce `config`'s limits. */
export function queryLimits(config: Config): {
  plugins: ApolloServerPlugin<RequestContext>[];
  validationRules: ValidationRule[];
  parseOptions: { maxTokens: number };
} {
  const limits = config.queryLimits;
  const armor = new ApolloArmor({
    maxDepth: { n: limits.depth, ignoreIntrospection: true },
    maxAliases: { n: limits.aliases },
    maxTokens: { enabled: false },
    maxDirectives: { n: limits.directives },
    // Our cost rule below replaces Armor's generic one.
    costLimit: { enabled: false },
    // Off: it rewrites error messages in place, which throws on the errors
    // graphql-jit returns. Apollo's hideSchemaDetailsFromClientErrors (set in
    // server.ts for production) removes "Did you mean ...?" instead.
    blockFieldSuggestion: { enabled: false },
  });
  const protection = armor.protect();
  return {
    plugins: [...(protection.plugins as ApolloServerPlugin<RequestContext>[]), costLimit(limits.nodes)],
    validationRules: protection.validationRules,
    parseOptions: { maxTokens: limits.tokens },
  };
}

function costLimit(maxNodes: number): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, operation, document }) {
          if (!operation) return;
          const fragments: Record<string, FragmentDefinitionNode> = {};
          for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
          const cost = operationCost(operation.selectionSet, fragments, request.variables ?? {});
          if (cost <= maxNodes) return;
          throw new GraphQLError(
            `This operation could return up to ${cost} messages; the limit is ${maxNodes}. Ask for smaller pages or fewer nested pages.`,
            { extensions: { code: 'QUERY_TOO_COMPLEX', cost, limit: maxNodes, http: { status: 400 } } },
          );
        },
      };
    },
  };
}
