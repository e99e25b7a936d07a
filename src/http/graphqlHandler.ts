/**
 * A thin `node:http` front for Apollo Server (no Express): CORS, the body
 * limit, JSON parsing with clear errors, and per-request statistics. Apollo
 * does the GraphQL-over-HTTP work (content negotiation, GET rules, CSRF
 * prevention, the landing page).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ApolloServer, HeaderMap } from '@apollo/server';
import type { Authentication } from '../auth/tokens.ts';
import { CONSISTENCY_HEADER, readConsistencyToken } from '../history/walPosition.ts';
import type { RequestContext, RequestStats } from '../graphql/context.ts';
import { readBody } from './readBody.ts';

export interface GraphQLHandlerOptions {
  apollo: ApolloServer<RequestContext>;
  path: string;
  maxBodyBytes: number;
  authenticate(header: string | undefined): Promise<Authentication>;
  /** `consistency`: the WAL position of the request's `Backscroll-Consistency` header, or null. */
  makeContext(auth: Authentication, stats: RequestStats, consistency: bigint | null): RequestContext;
  /** Called after each GraphQL request with what it did (tests, metrics). */
  onRequestStats?(stats: RequestStats, req: IncomingMessage): void;
  onError(error: unknown): void;
  /**
   * Called for a request refused before it became a GraphQL request (bad
   * JSON, a body over the limit, a wrong method or content type): those never
   * reach the request log plugin, so the handler reports them, as one line.
   */
  onRefused?(refusal: { method: string; status: number; code: string }): void;
  /**
   * Decides what a request may run before Apollo sees it (trusted documents,
   * src/graphql/trustedDocuments.ts): the body and query string to hand on,
   * or a refusal answered here.
   */
  admit?(request: { method: string; body: unknown; search: string }):
    | { ok: true; body: unknown; search: string }
    | { ok: false; status: number; code: string; message: string };
}

const CORS_HEADERS: Record<string, string> = {
  // Bearer tokens, not cookies: any origin may call, none gets ambient credentials.
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': `authorization, content-type, apollo-require-preflight, x-apollo-operation-name, ${CONSISTENCY_HEADER}`,
  // Without this a browser hides the token from the page (only "simple" response headers are readable).
  'access-control-expose-headers': CONSISTENCY_HEADER,
  'access-control-max-age': '86400',
};

function sendJsonError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...CORS_HEADERS });
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }));
}

/** The first error code of an Apollo response body (its HTTP-level refusals carry one too). */
function firstCode(body: string): string {
  try {
    return (JSON.parse(body) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code ?? 'BAD_REQUEST';
  } catch {
    return 'BAD_REQUEST';
  }
}

/** Makes the request listener for the GraphQL endpoint. */
export function createGraphQLHandler(options: GraphQLHandlerOptions) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const refuse = (status: number, code: string, message: string) => {
      sendJsonError(res, status, code, message);
      options.onRefused?.({ method, status, code });
    };
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== options.path) {
        refuse(404, 'NOT_FOUND', `Nothing here: the GraphQL endpoint is ${options.path}.`);
        return;
      }
      if (method === 'OPTIONS') {
        res.writeHead(204, CORS_HEADERS);
        res.end();
        return;
      }
      let body: unknown;
      if (method === 'POST') {
        const read = await readBody(req, options.maxBodyBytes);
        if (!read.ok) {
          refuse(413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${options.maxBodyBytes} bytes.`);
          return;
        }
        const contentType = req.headers['content-type'] ?? '';
        if (/^application\/(graphql-response\+)?json\b/i.test(contentType) || /\+json\b/i.test(contentType)) {
          try {
            body = JSON.parse(read.text);
          } catch {
            refuse(400, 'BAD_REQUEST', 'The request body is not valid JSON.');
            return;
          }
        } else {
          body = read.text;
        }
      }
      // Before the gate and the database: a malformed token runs nothing.
      const consistency = readConsistencyToken(req.headers[CONSISTENCY_HEADER] as string | undefined);
      if (!consistency.ok) {
        refuse(400, 'BAD_USER_INPUT', consistency.problem);
        return;
      }
      let search = url.search;
      if (options.admit) {
        const admitted = options.admit({ method, body, search });
        if (!admitted.ok) {
          refuse(admitted.status, admitted.code, admitted.message);
          return;
        }
        ({ body, search } = admitted);
      }
      const headers = new HeaderMap();
      for (const [key, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      }
      const stats: RequestStats = { statements: 0, texts: [], batches: [] };
      const auth = await options.authenticate(req.headers.authorization);
      // Apollo makes the context only for a well-formed GraphQL request, whose
      // line the request log plugin writes.
      let becameGraphQLRequest = false;
      const response = await options.apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method, headers, search, body },
        context: async () => {
          becameGraphQLRequest = true;
          return options.makeContext(auth, stats, consistency.position);
        },
      });
      options.onRequestStats?.(stats, req);
      res.statusCode = response.status ?? 200;
      if (!becameGraphQLRequest && res.statusCode >= 400 && response.body.kind === 'complete') {
        options.onRefused?.({ method, status: res.statusCode, code: firstCode(response.body.string) });
      }
      for (const [key, value] of response.headers) res.setHeader(key, value);
      for (const [key, value] of Object.entries(CORS_HEADERS)) res.setHeader(key, value);
      if (response.body.kind === 'complete') {
        res.end(response.body.string);
        return;
      }
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    } catch (error) {
      options.onError(error);
      if (!res.headersSent) sendJsonError(res, 500, 'INTERNAL_SERVER_ERROR', 'The server failed to answer this request.');
      else res.end();
    }
  };
}
