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

/** Compiled operations kept per process; a client fleet uses far fewer distinct ones. */
const MAX_COMPILED = 1000;

/** A gateway that serves `schema` and executes every operation through a compiled-query cache. */
export function jitGateway(schema: GraphQLSchema): GatewayInterface {
  const compiled = new Map<string, CompiledQuery>();
  const executor: GatewayExecutor = async (request) => {
    // The name the client sent: Apollo's `request.operationName` is the name it
    // resolved, null when none matched, and graphql-jit would then run the
    // document's only operation after every plugin (cost, rate limits) had
    // skipped it for want of an operation.
    const operationName = request.request.operationName ?? undefined;
    const key = `${request.queryHash}:${operationName ?? ''}`;
    let query = compiled.get(key);
    if (query === undefined) {
      const result = compileQuery(request.schema, request.document, operationName);
      // With no operation resolved, Apollo answers OPERATION_RESOLUTION_FAILURE
      // from the first error; otherwise the schema cannot run this kind of
      // operation (a subscription), which graphql-js 16 does not validate.
      if (!isCompiledQuery(result)) return request.operation ? { errors: (result.errors ?? []).map(asValidationFailure) } : result;
      query = result;
      if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
      compiled.set(key, query);
    }
    const result = await query.query(undefined, request.context, request.request.variables ?? {});
    // No data at all means the variables were refused before execution began;
    // graphql-js reports those as BAD_USER_INPUT, graphql-jit leaves them bare.
    if (result.data === undefined && result.errors) {
      return { errors: result.errors.map(asBadUserInput) };
    }
    if (result.errors) return { ...result, errors: result.errors.map(withExtensions) };
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
