/**
 * The operation gate inside Apollo Server: once Apollo has parsed and
 * validated a request, the gate decides it (operationGate.ts) and leaves
 * what it read on the context, where the executor (jitGateway.ts) finds the
 * operation to run. Apollo's own idea of the operation is not trusted: it
 * resolves an empty `operationName` to none, and an executor asked to run
 * none once ran the document's only operation unchecked.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestContext } from '../context.ts';
import type { OperationGate } from './operationGate.ts';

/** The Apollo plugin that puts every HTTP operation through `gate`. */
export function gatePlugin(gate: OperationGate): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, contextValue }) {
          const decision = await gate.check({
            document,
            operationName: request.operationName,
            variables: request.variables,
            auth: contextValue.auth,
            transport: request.http?.method === 'GET' ? 'http-get' : 'http-post',
          });
          if (!decision.ok) throw decision.error;
          contextValue.gate = decision.analysis;
        },
      };
    },
  };
}
