/**
 * Subscriptions run by graphql-jit, as HTTP operations are (jitGateway.ts):
 * a live event is executed once per subscriber, so 500 subscribers of a
 * group at 20 messages a second are 10,000 executions a second, and
 * graphql-js's per-event work (building an execution context, coercing
 * variables, collecting fields) was most of a worker's GraphQL time in the
 * fan-out row. Each distinct operation is compiled once; the operation the
 * gate admitted (by name) is the one compiled.
 *
 * Only events are executed by the compiled query: the source stream is
 * opened by graphql-js, because graphql-jit's own `subscribe` (0.8) passes
 * the operation's variables to the field's `subscribe` as its arguments.
 */
// graphql's CommonJS build, as the WebSocket server's (see webSocketServer.ts):
// the schema and errors there are that build's objects.
import { createSourceEventStream, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, subscribe as graphqlSubscribe } from 'graphql/index.js';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';

/** Compiled subscriptions kept per process; clients use a handful. */
const MAX_COMPILED = 1000;

export interface CompiledSubscriptions {
  /**
   * Compiles (or finds, by `query` text and operation name) the operation
   * of `args`, to run when `subscribe` is given these same `args`. An
   * operation graphql-jit cannot compile is left to graphql-js.
   */
  prepare(args: ExecutionArgs, query: string): void;
  /** Runs `args` (as graphql-js `subscribe` would): compiled when `prepare` saw them. */
  subscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | AsyncIterableIterator<ExecutionResult> | ExecutionResult>;
}

/** Compiled subscriptions on `schema`. */
export function compiledSubscriptions(schema: GraphQLSchema): CompiledSubscriptions {
  const compiled = new LRUCache<string, CompiledQuery>({ max: MAX_COMPILED });
  const prepared = new WeakMap<ExecutionArgs, CompiledQuery>();
  return {
    prepare(args, query) {
      const operationName = args.operationName ?? undefined;
      const key = `${operationName ?? ''}\n${query}`;
      let found = compiled.get(key);
      if (found === undefined) {
        const result = compileQuery(schema, args.document, operationName);
        if (!isCompiledQuery(result)) return;
        compiled.set(key, (found = result));
      }
      prepared.set(args, found);
    },
    async subscribe(args) {
      const query = prepared.get(args);
      if (query === undefined) return graphqlSubscribe(args);
      const events = await createSourceEventStream(args);
      if (!(Symbol.asyncIterator in events)) return events;
      // Each event as graphql-js's subscribe maps it: the operation executed with the event as its root value.
      return mapEvents(events, (event) => query.query(event, args.contextValue, args.variableValues ?? {}));
    },
  };
}

/**
 * `source`'s values through `map`, as graphql-js maps a subscription's
 * events: `return()` reaches the source at once, even while a `next()`
 * waits on it (an async generator would wait for the next event first, and
 * a completed subscription would stay registered until then).
 */
function mapEvents<Event, Result>(source: AsyncIterable<Event>, map: (event: Event) => Result | Promise<Result>): AsyncIterableIterator<Result> {
  const iterator = source[Symbol.asyncIterator]();
  const mapped = async (step: IteratorResult<Event>): Promise<IteratorResult<Result>> => {
    if (step.done === true) return { done: true, value: undefined };
    try {
      return { done: false, value: await map(step.value) };
    } catch (error) {
      await iterator.return?.();
      throw error;
    }
  };
  return {
    next: async () => mapped(await iterator.next()),
    return: async () => (iterator.return === undefined ? { done: true, value: undefined } : mapped(await iterator.return())),
    throw: async (error: unknown) => {
      if (iterator.throw === undefined) throw error;
      return mapped(await iterator.throw(error));
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
