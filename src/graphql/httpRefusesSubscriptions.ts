/**
 * A validation rule for the HTTP path: subscriptions run over WebSocket
 * only. graphql-js does not check that an operation's kind can be served, and
 * graphql-jit would run a subscription once as if it were a query.
 */
import { GraphQLError, type ValidationRule } from 'graphql';

/** Refuses every subscription operation, naming where to send it instead. */
export function httpRefusesSubscriptions(path: string): ValidationRule {
  return (context) => ({
    OperationDefinition(node) {
      if (node.operation !== 'subscription') return;
      context.reportError(
        new GraphQLError(`Subscriptions run over WebSocket (the graphql-transport-ws protocol of graphql-ws) at ${path}, not over HTTP.`, {
          nodes: [node],
        }),
      );
    },
  });
}
