/**
 * Subscriptions over WebSocket (`graphql-transport-ws`, the protocol of
 * `graphql-ws`) on the HTTP server's own port and path.
 *
 * - Authentication happens once, at `connection_init`: `connectionParams`
 *   carries `authorization: "Bearer <token>"` (or `Authorization`), checked by
 *   the same verifier as HTTP. A missing or bad token closes the socket with
 *   4401, which graphql-ws clients do not retry. The socket is closed with
 *   4401 again when the token expires: reconnect with a fresh one.
 * - Only subscriptions: queries and mutations answer `BAD_REQUEST` (they go
 *   over HTTP, through its rate limits and request log).
 * - Each subscription is parsed and validated with the HTTP path's limits
 *   (tokens, depth, aliases), then decided by the same operation gate as
 *   HTTP (src/graphql/gate/: operation selection, cost, rate limits), then
 *   run with exactly the operation the gate read, compiled by graphql-jit
 *   (src/graphql/compiledSubscriptions.ts: each event runs once per
 *   subscriber).
 * - A user holds at most MAX_SOCKETS_PER_USER sockets (across processes on
 *   PostgreSQL), and opening sockets and subscribing are rate-limited: a
 *   socket past the limit is closed with 4429 before it is acknowledged.
 * - Errors are formatted as over HTTP: codes pass, anything unexpected is
 *   logged and answered `INTERNAL_SERVER_ERROR`.
 * - When events may have been missed (see hub.ts) sockets are closed with
 *   1012 (every socket when the LISTEN connection was lost, the subscribers
 *   of one conversation when its events were committed and never
 *   announced), and a socket that falls too far behind with 1013;
 *   graphql-ws clients reconnect on both and resubscribe.
 */
import type { Server } from 'node:http';
// graphql's CommonJS build by name: the instance graphql-ws and
// @graphql-tools/schema use. Under vitest a bare 'graphql' import gets the
// ESM build, a second copy whose schema and error checks (`instanceof`)
// reject the other's objects; in production both names are the same module.
import {
  type DocumentNode,
  type ExecutionArgs,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  parse,
  specifiedRules,
  validate,
  type ValidationRule,
} from 'graphql/index.js';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { decodeJwt } from 'jose';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Authentication } from '../auth/tokens.ts';
import { compiledSubscriptions } from '../graphql/compiledSubscriptions.ts';
import type { OperationGate } from '../graphql/gate/operationGate.ts';
import type { RateLimiter } from '../graphql/gate/rateLimiter.ts';
import type { SubscriptionContext } from '../graphql/liveEvents.ts';
import type { SocketLimit } from './socketLimit.ts';

/** graphql-ws's code for "not authenticated"; its clients give up instead of retrying. */
const CLOSE_UNAUTHORIZED = 4401;
/** Too many sockets or connection attempts for this user; like HTTP 429. */
const CLOSE_TOO_MANY = 4429;
/** Service Restart: events may have been missed; graphql-ws clients reconnect. */
const CLOSE_RESYNC = 1012;
/** Try Again Later: this connection fell too far behind; graphql-ws clients reconnect. */
const CLOSE_BEHIND = 1013;
/** Open subscriptions one socket may hold. */
const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;
/** How long a shutdown waits for clients to answer the close before dropping them. */
const CLOSE_WAIT_MS = 1000;
/** The longest delay `setTimeout` takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the WebSocket server needs from the wiring (src/server.ts). */
export interface SubscriptionServerOptions {
  httpServer: Server;
  path: string;
  schema: GraphQLSchema;
  authenticate(header: string | undefined): Promise<Authentication>;
  /** The context of one subscription by `auth`; `resync` closes its socket (1013 `behind`, 1012 `missed`) so the client reconnects. */
  makeContext(auth: Authentication & { kind: 'user' }, resync: (reason: string, cause: 'behind' | 'missed') => void): SubscriptionContext;
  /** `maxCost`: what the open subscriptions of one socket may cost per event, together. */
  limits: { validationRules: ValidationRule[]; maxTokens: number; maxCost: number };
  /** The operation gate every operation passes, HTTP or WebSocket. */
  gate: OperationGate;
  /** Counts sockets opened per user (`connect`). */
  limiter: RateLimiter;
  /** Open sockets per user. */
  sockets: SocketLimit;
  /** Formats an error for the client (the HTTP path's `formatError`). */
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
  maxPayloadBytes: number;
  /** Whether close reasons of internal errors are hidden. */
  production: boolean;
  /**
   * Put each live event's consistency token in its result's
   * `extensions.consistency`: on when the server reads from replicas, as
   * HTTP responses carry tokens only then.
   */
  consistencyTokens?: boolean;
  /** Trusted documents (src/graphql/trustedDocuments.ts): the document to run instead of `query` (null: `query`), or a refusal. */
  admit?(payload: SubscribePayload): { ok: true; query: string | null } | { ok: false; code: string; message: string };
}

/** The running WebSocket server. */
export interface SubscriptionServer {
  /** Closes every socket with 1012: events may have been missed; clients reconnect and fill the gap. */
  resyncAll(reason: string): void;
  /** Closes every socket (1001, Going Away) and stops accepting new ones. */
  close(): Promise<void>;
}

type ConnectionExtra = {
  auth: Authentication & { kind: 'user' };
  expiry: NodeJS.Timeout;
  /** Gives back this socket's place in its user's socket limit. */
  release: () => void;
  /** The cost per event of each open subscription, by id: together they stay within the operation limit. */
  costs: Map<string, number>;
};

/** The `authorization` entry of `connectionParams`, either spelling; undefined when absent or not a string. */
function authorizationOf(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const value = params?.authorization ?? params?.Authorization;
  return typeof value === 'string' ? value : undefined;
}

/** When the (already verified) bearer token in `header` expires, in ms since the epoch. */
function expiryOf(header: string): number {
  const token = /^Bearer (\S+)$/i.exec(header.trim())?.[1] ?? '';
  return (decodeJwt(token).exp ?? Infinity) * 1000;
}

/** A close reason within the 123 bytes a close frame allows. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text);
  return bytes.length <= 123 ? text : `${bytes.subarray(0, 120).toString('utf8').replace(/\uFFFD+$/, '')}...`;
}

const withCode = (error: GraphQLError, code: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { code, ...extensions } });

const refusal = (message: string, code: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extensions } });

/** Serves subscriptions on `options.httpServer` at `options.path`. */
export function startSubscriptionServer(options: SubscriptionServerOptions): SubscriptionServer {
  const { schema, limits } = options;
  const rules = [...specifiedRules, ...limits.validationRules];
  const close = (socket: WebSocket, code: number, reason: string) => socket.close(code, closeReason(reason));
  const compiled = compiledSubscriptions(schema);
  const wss = new WebSocketServer({ server: options.httpServer, path: options.path, maxPayload: options.maxPayloadBytes });

  /** The arguments to run `payload` with, or the errors that refuse it. */
  const prepare = async (extra: Partial<ConnectionExtra> & { socket: WebSocket }, id: string, open: number, payload: SubscribePayload): Promise<ExecutionArgs | GraphQLError[]> => {
    const auth = extra.auth;
    // graphql-ws refuses a subscribe before the connection is acknowledged; guard anyway.
    if (auth === undefined) return [refusal('Authenticate in `connectionParams` first.', 'UNAUTHENTICATED')];
    if (open > MAX_SUBSCRIPTIONS_PER_SOCKET) {
      return [refusal(`One connection may hold at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions; complete some first.`, 'RATE_LIMITED')];
    }
    const admitted = options.admit?.(payload) ?? { ok: true, query: null };
    if (!admitted.ok) return [refusal(admitted.message, admitted.code)];
    let document: DocumentNode;
    try {
      document = parse(admitted.query ?? payload.query, { maxTokens: limits.maxTokens });
    } catch (error) {
      return [error instanceof GraphQLError ? withCode(error, 'GRAPHQL_PARSE_FAILED') : refusal('The query could not be parsed.', 'GRAPHQL_PARSE_FAILED')];
    }
    const invalid = validate(schema, document, rules);
    if (invalid.length > 0) return invalid.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));
    const decision = await options.gate.check({
      document,
      operationName: payload.operationName,
      variables: payload.variables ?? {},
      auth,
      transport: 'websocket',
    });
    if (!decision.ok) {
      const { http: _http, ...extensions } = decision.error.extensions as Record<string, unknown>;
      return [refusal(decision.error.message, String(extensions.code), extensions)];
    }
    // Each subscription is within the limit; a hundred of them on one socket must be too, together.
    const costs = (extra.costs ??= new Map());
    const socketCost = [...costs.values()].reduce((sum, cost) => sum + cost, 0) + decision.analysis.cost;
    if (socketCost > limits.maxCost) {
      return [
        refusal(
          `This connection's subscriptions could return up to ${socketCost} items per event together; the limit is ${limits.maxCost}. Complete some, or ask for less in each.`,
          'QUERY_TOO_COMPLEX',
          { cost: socketCost, limit: limits.maxCost },
        ),
      ];
    }
    costs.set(id, decision.analysis.cost);
    const args: ExecutionArgs = {
      schema,
      document,
      // The operation the gate read, by its name (null: the document's only one).
      operationName: decision.analysis.operation.name?.value,
      variableValues: payload.variables ?? {},
      contextValue: options.makeContext(auth, (reason, cause) => close(extra.socket, cause === 'behind' ? CLOSE_BEHIND : CLOSE_RESYNC, reason)),
    };
    compiled.prepare(args, admitted.query ?? payload.query);
    return args;
  };

  const format = (errors: readonly GraphQLError[]) => errors.map((error) => options.formatError(error.toJSON(), error));

  const disposable = useServer<Record<string, unknown>, ConnectionExtra>(
    {
      schema,
      isProd: options.production,
      subscribe: (args) => compiled.subscribe(args),
      onConnect: async (ctx) => {
        const header = authorizationOf(ctx.connectionParams);
        const auth = await options.authenticate(header);
        if (auth.kind !== 'user') {
          const reason = auth.kind === 'invalid' ? auth.reason : 'Send `authorization: "Bearer <token>"` in connectionParams.';
          close(ctx.extra.socket, CLOSE_UNAUTHORIZED, reason);
          return false;
        }
        const connecting = await options.limiter.take(auth.userId, 'connect', 1);
        if (!connecting.allowed) {
          close(ctx.extra.socket, CLOSE_TOO_MANY, `Too many connections opened: try again in ${Math.ceil(connecting.retryAfterMs / 1000)} s.`);
          return false;
        }
        const release = await options.sockets.take(auth.userId);
        if (release === null) {
          close(ctx.extra.socket, CLOSE_TOO_MANY, 'This user holds the most WebSocket connections allowed (MAX_SOCKETS_PER_USER); close one first.');
          return false;
        }
        // Closed while its place was being taken: onClose has already run.
        if (ctx.extra.socket.readyState !== ctx.extra.socket.OPEN) {
          release();
          return false;
        }
        ctx.extra.release = release;
        ctx.extra.auth = auth;
        // A socket lives no longer than the token it was opened with.
        const expiresAtMs = expiryOf(header!);
        const expiry = setTimeout(
          () => close(ctx.extra.socket, CLOSE_UNAUTHORIZED, 'The token has expired.'),
          Math.min(Math.max(expiresAtMs - Date.now(), 0), MAX_TIMER_MS),
        );
        expiry.unref();
        ctx.extra.expiry = expiry;
        return true;
      },
      onClose: (ctx) => {
        if (ctx.extra.expiry !== undefined) clearTimeout(ctx.extra.expiry);
        ctx.extra.release?.();
      },
      onSubscribe: (ctx, id, payload) => prepare(ctx.extra, id, Object.keys(ctx.subscriptions).length, payload),
      onComplete: (ctx, id) => void ctx.extra.costs?.delete(id),
      onNext: (_ctx, _id, _payload, args, result) => {
        // The token of the event just resolved (liveEvents.ts sets it with the event's context).
        const consistency = options.consistencyTokens ? (args.contextValue as SubscriptionContext).liveConsistency : null;
        const withToken = consistency ? { ...result, extensions: { ...result.extensions, consistency } } : result;
        return result.errors ? { ...withToken, errors: format(result.errors) } : consistency ? withToken : undefined;
      },
      onError: (_ctx, _id, _payload, errors) => format(errors),
    },
    wss,
  );

  return {
    resyncAll(reason) {
      for (const socket of wss.clients) close(socket, CLOSE_RESYNC, reason);
    },
    async close() {
      const dropping = setTimeout(() => {
        for (const socket of wss.clients) socket.terminate();
      }, CLOSE_WAIT_MS);
      try {
        await disposable.dispose();
      } finally {
        clearTimeout(dropping);
      }
    },
  };
}
