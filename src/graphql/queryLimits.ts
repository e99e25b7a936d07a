/**
 * Limits on the shape of a document, checked as it is parsed and validated:
 * depth, aliases and directives with GraphQL Armor, tokens by graphql-js's
 * own parser limit (Armor's token plugin parses every new document a second
 * time and reports syntax errors as validation failures). What the operation
 * may cost, who may run it and how often is the operation gate's decision
 * (src/graphql/gate/), made after validation.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ValidationRule } from 'graphql';
import type { Config } from '../config.ts';
import type { RequestContext } from './context.ts';

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
    // The gate's cost rule (gate/analyseOperation.ts) replaces Armor's generic one.
    costLimit: { enabled: false },
    // Off: it rewrites error messages in place, which throws on the errors
    // graphql-jit returns. Apollo's hideSchemaDetailsFromClientErrors (set in
    // server.ts for production) removes "Did you mean ...?" instead.
    blockFieldSuggestion: { enabled: false },
  });
  const protection = armor.protect();
  return {
    plugins: protection.plugins as ApolloServerPlugin<RequestContext>[],
    validationRules: protection.validationRules,
    parseOptions: { maxTokens: limits.tokens },
  };
}
