/**
 * Executes operations with graphql-jit instead of graphql-js, plugged into
 * Apollo Server through its gateway interface (the supported way to supply
 * an executor). Apollo still parses, validates (with its document cache),
 * runs plugins and formats errors; each distinct operation is compiled once
 * into a function specialised to its selection, which removes most of
 * graphql-js's per-field work on 50-edge pages.
 */
import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import type { RequestContext } from './context.ts';

/** Compiled operations kept per process; a client fleet uses far fewer distinct ones. */
const MAX_COMPILED = 1000;

/** A gateway that serves `schema` and executes every operation through a compiled-query cache. */
export function jitGateway(schema: GraphQLSchema): GatewayInterface {
  const compiled = new LRUCache<string, CompiledQuery>({ max: MAX_COMPILED });
  const executor: GatewayExecutor = async (request) => {
    // Run exactly the operation the gate read and admitted (gate/gatePlugin.ts),
    // never one graphql-jit picks for itself: it takes an empty name to mean
    // "the only operation", where the gate (and the spec) select none.
    const admitted = (request.context as Partial<RequestContext>).gate;
    if (admitted === undefined) {
      return { errors: [new GraphQLError('No operation was admitted to run.', { extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } })] };
    }
    const operationName = admitted.operation.name?.value;
    const key = `${request.queryHash}:${operationName ?? ''}`;
    let query = compiled.get(key);
    if (query === undefined) {
      const result = compileQuery(request.schema, request.document, operationName);
      // The schema cannot run this kind of operation (a subscription), which graphql-js 16 does not validate.
      if (!isCompiledQuery(result)) return { errors: (result.errors ?? []).map(asValidationFailure) };
      query = result;
      compiled.set(key, query);
    }
    const result = await query.query(undefined, request.context, request.request.variables ?? {});
    // No data at all means the variables were refused before execution began;
    // graphql-js reports those as BAD_USER_INPUT, graphql-jit leaves them bare.
    if (result.data === undefined && result.errors) {
      return { errors: result.errors.map(asBadUserInput) };
    }
    const partial = (request.context as RequestContext).partialErrors ?? [];
    if (result.errors || partial.length > 0) return { ...result, errors: [...(result.errors ?? []).map(withExtensions), ...partial] };
    return result;
  };
  return {
    async load() {
      return { executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => {};
    },
    async stop() {},
  };
}

function asValidationFailure(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, { nodes: error.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
}

function asBadUserInput(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    originalError: error.originalError,
    extensions: { ...error.extensions, code: 'BAD_USER_INPUT' },
  });
}

/**
 * graphql-jit leaves `extensions` undefined on errors whose cause is not a
 * GraphQLError (a database failure, a bug); Apollo reads `extensions.code`
 * and would fail on them, answering a bare "Internal server error". Rebuild
 * those as ordinary GraphQLErrors that keep the cause.
 */
function withExtensions(error: GraphQLError): GraphQLError {
  if (error.extensions) return error;
  return new GraphQLError(error.message, { path: error.path, originalError: error.originalError ?? error });
}
