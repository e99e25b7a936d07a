/**
 * The one gate every operation passes before it runs, whatever carried it
 * (HTTP POST, HTTP GET, a WebSocket subscribe): it reads the operation once
 * (analyseOperation.ts) and decides, in order, whether the transport may run
 * this kind of operation, whether the caller is authenticated, whether its
 * cost is within the limit, and whether the caller's rate limits allow it.
 * Rate limits are taken last, so a refused operation never spends them.
 * The executor then runs exactly the operation the gate read (jitGateway.ts,
 * the WebSocket server), never one it picked for itself.
 *
 * Trusted documents are decided one step earlier, on the document's text or
 * id before it is even parsed (trustedDocuments.ts), by the same function
 * for both transports.
 */
import { type DocumentNode, GraphQLError, type GraphQLSchema } from 'graphql/index.js';
import { HeaderMap } from '@apollo/server';
import type { Authentication } from '../../auth/tokens.ts';
import { type OperationAnalysis, analyseOperation } from './analyseOperation.ts';
import type { RateLimiter } from './rateLimiter.ts';

/** How the operation arrived: GET may only query, WebSocket may only subscribe. */
type Transport = 'http-get' | 'http-post' | 'websocket';

interface GateRequest {
  document: DocumentNode;
  operationName: unknown;
  variables: unknown;
  auth: Authentication;
  transport: Transport;
}

type GateDecision = { ok: true; analysis: OperationAnalysis } | { ok: false; error: GraphQLError };

export interface OperationGate {
  check(request: GateRequest): Promise<GateDecision>;
}

export interface GateOptions {
  schema: GraphQLSchema;
  /** The most list items one operation may ask for (MAX_QUERY_NODES). */
  maxCost: number;
  limiter: RateLimiter;
  /** The HTTP path, named in refusals that send a client elsewhere. */
  path: string;
}

const refuse = (message: string, code: string, extensions: Record<string, unknown> = {}): GateDecision => ({
  ok: false,
  error: new GraphQLError(message, { extensions: { code, ...extensions } }),
});

/** Makes the gate. */
export function createOperationGate(options: GateOptions): OperationGate {
  return {
    async check(request) {
      const read = analyseOperation(options.schema, request.document, request.operationName, request.variables);
      if (!read.ok) {
        const first = read.errors[0]!;
        return refuse(first.message, read.code, { http: { status: 400 } });
      }
      const { analysis } = read;
      const transportProblem = transportRefusal(request.transport, analysis.kind, options.path);
      if (transportProblem) return transportProblem;
      const auth = request.auth;
      if (auth.kind !== 'user') {
        if (analysis.introspectionOnly) return { ok: true, analysis };
        const reason = auth.kind === 'invalid' ? auth.reason : 'This operation needs an `Authorization: Bearer <token>` header.';
        return refuse(reason, 'UNAUTHENTICATED', { http: { status: 401 } });
      }
      if (analysis.cost > options.maxCost) {
        const what = analysis.kind === 'subscription' ? 'This subscription could return up to' : 'This operation could return up to';
        return refuse(
          `${what} ${analysis.cost} items${analysis.kind === 'subscription' ? ' per event' : ''}; the limit is ${options.maxCost}. Ask for smaller pages or fewer nested pages.`,
          'QUERY_TOO_COMPLEX',
          { cost: analysis.cost, limit: options.maxCost, http: { status: 400 } },
        );
      }
      for (const [action, times] of rateLimitedActions(analysis)) {
        const decision = await options.limiter.take(auth.userId, action, times);
        if (decision.allowed) continue;
        const retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        return refuse(
          `Too many ${action} calls: try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`,
          'RATE_LIMITED',
          { retryAfterSeconds, http: { status: 429, headers: new HeaderMap([['retry-after', String(retryAfterSeconds)]]) } },
        );
      }
      return { ok: true, analysis };
    },
  };
}

/** Why `transport` may not run an operation of `kind`, or null. */
function transportRefusal(transport: Transport, kind: OperationAnalysis['kind'], path: string): GateDecision | null {
  if (transport === 'websocket') {
    return kind === 'subscription' ? null : refuse(`Only subscriptions run over WebSocket; send queries and mutations with HTTP POST to ${path}.`, 'BAD_REQUEST');
  }
  if (kind === 'subscription') {
    return refuse(`Subscriptions run over WebSocket (graphql-transport-ws) at ${path}, not over HTTP.`, 'BAD_REQUEST', { http: { status: 400 } });
  }
  if (transport === 'http-get' && kind !== 'query') {
    // GET must be safe (GraphQL over HTTP): a link or a prefetch must never change anything.
    return refuse(`GET requests run only queries; send a ${kind} with POST.`, 'BAD_REQUEST', {
      http: { status: 405, headers: new HeaderMap([['allow', 'POST']]) },
    });
  }
  return null;
}

/** What the operation spends from its caller's rate limits: each mutation field per execution, each subscription once. */
function rateLimitedActions(analysis: OperationAnalysis): Map<string, number> {
  const actions = new Map<string, number>();
  if (analysis.kind === 'subscription') actions.set('subscribe', 1);
  if (analysis.kind === 'mutation') {
    for (const field of analysis.rootFields) if (!field.startsWith('__')) actions.set(field, (actions.get(field) ?? 0) + 1);
  }
  return actions;
}
