/**
 * Starts the real server (real schema, HTTP, JWT) on a fresh database and
 * gives tests a client per user. Every request's statistics (SQL statements,
 * loader batches) are returned with its response.
 */
import { sql } from 'drizzle-orm';
import { signToken } from '../../src/auth/tokens.ts';
import { type Config, readConfig } from '../../src/config.ts';
import type { DatabaseHandle } from '../../src/db/client.ts';
import type { RequestStats } from '../../src/graphql/context.ts';
import type { ReadinessCheck } from '../../src/http/healthHandler.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { searchVector } from '../../src/history/searchText.ts';
import { type Backend, openTestDatabase } from './database.ts';

export const TEST_SECRET = 'test-secret-that-is-at-least-32-characters-long';

/** Tests send in bursts on purpose; rate limits are tested with their own settings (rateLimits.test.ts). */
const UNLIMITED_RATES = {
  RATE_LIMIT_SEND_PER_SECOND: '100000',
  RATE_LIMIT_SEND_BURST: '100000',
  RATE_LIMIT_MUTATIONS_PER_SECOND: '100000',
  RATE_LIMIT_MUTATIONS_BURST: '100000',
  RATE_LIMIT_SUBSCRIBE_PER_SECOND: '100000',
  RATE_LIMIT_SUBSCRIBE_BURST: '100000',
  RATE_LIMIT_CONNECT_PER_SECOND: '100000',
  RATE_LIMIT_CONNECT_BURST: '100000',
  MAX_SOCKETS_PER_USER: '10000',
};

/** What one GraphQL request answered, with what it cost. */
export interface GraphQLResponse<Data = any> {
  status: number;
  data?: Data | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  stats: RequestStats;
  /** The raw response text, for checks such as "no stack trace anywhere". */
  text: string;
}

export interface Client {
  userId: string;
  token: string;
  /** Sends `query` with `variables` as this user. */
  gql<Data = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<Data>>;
}

export interface Harness {
  backend: Backend;
  database: DatabaseHandle;
  server: RunningServer;
  config: Config;
  /** A client that authenticates as `userId`, with any extra token claims (`{ roles: ['admin'] }`). */
  client(userId: string, claims?: Record<string, unknown>): Promise<Client>;
  /** Posts a raw request (any headers, any body) to the GraphQL endpoint. */
  post(body: string, headers?: Record<string, string>): Promise<GraphQLResponse>;
  /** Sends a GET with `params` as the query string to the GraphQL endpoint. */
  get(params: Record<string, string>, headers?: Record<string, string>): Promise<GraphQLResponse>;
  /**
   * How many subscriptions the server has registered (its
   * `backscroll_subscriptions_open` gauge): graphql-ws does not acknowledge a
   * subscription, so a test that needs one live waits for this count.
   */
  openSubscriptions(): Promise<number>;
  close(): Promise<void>;
}

/** What a test may put in place of the defaults. */
export interface HarnessOptions {
  logger?: Logger;
  readiness?: ReadinessCheck;
}

/** Starts a server on `backend` with a fresh database; `env` overrides configuration. */
export async function startHarness(backend: Backend, env: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const database = await openTestDatabase(backend);
  const result = readConfig({ JWT_SECRET: TEST_SECRET, PORT: '0', ...UNLIMITED_RATES, ...env });
  if (!result.ok) throw new Error(result.problems.join(' '));
  const config = result.config;
  // Stats arrive keyed by a per-request header, so concurrent requests never mix them up.
  const statsByRequest = new Map<string, RequestStats>();
  let nextRequestId = 0;
  const server = await startServer(
    {
      config,
      // Keeps each statement's text in the request's stats, for failure messages.
      client: { ...database.client, keepStatementTexts: true },
      readClient: database.reads === null ? undefined : { ...database.reads, keepStatementTexts: true },
      jwtSecret: TEST_SECRET,
      logger: options.logger ?? createLogger('silent'),
      readiness: options.readiness,
      onRequestStats: (stats, req) => {
        const id = req.headers['x-test-request-id'];
        if (typeof id === 'string') statsByRequest.set(id, stats);
      },
    },
    0,
  );
  const send = async (method: 'GET' | 'POST', search: string, body: string | undefined, headers: Record<string, string>): Promise<GraphQLResponse> => {
    const requestId = String(nextRequestId++);
    const response = await fetch(`${server.url}${search}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'x-test-request-id': requestId, ...headers },
      body,
    });
    const text = await response.text();
    // The handler reports stats before it writes the response, so they are here by now.
    const stats = statsByRequest.get(requestId) ?? { statements: 0, texts: [], batches: [] };
    statsByRequest.delete(requestId);
    let parsed: { data?: unknown; errors?: GraphQLResponse['errors'] } = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = {};
    }
    return { status: response.status, data: parsed.data, errors: parsed.errors, stats, text };
  };
  const post = (body: string, headers: Record<string, string> = {}) => send('POST', '', body, headers);
  const get = (params: Record<string, string>, headers: Record<string, string> = {}) =>
    send('GET', `?${new URLSearchParams(params).toString()}`, undefined, headers);
  return {
    backend,
    database,
    server,
    config,
    post,
    get,
    async openSubscriptions() {
      const headers: Record<string, string> = config.metricsToken === null ? {} : { authorization: `Bearer ${config.metricsToken}` };
      const text = await (await fetch(new URL('/metrics', server.url), { headers })).text();
      return Number(/^backscroll_subscriptions_open (\d+)$/m.exec(text)?.[1] ?? 0);
    },
    async client(userId, claims = {}) {
      const token = await signToken(TEST_SECRET, userId, 3600, claims);
      return {
        userId,
        token,
        gql: (query, variables) =>
          post(JSON.stringify({ query, variables }), { authorization: `Bearer ${token}` }) as Promise<GraphQLResponse<any>>,
      };
    },
    async close() {
      await server.stop();
      await database.close();
    },
  };
}

/** The error codes of a response, in order. */
export function codes(response: GraphQLResponse): unknown[] {
  return (response.errors ?? []).map((e) => e.extensions?.code);
}

/** Stores `rows` (seqs 1 to n, creation times in ms) as the messages of `convId`, sent by `senderId`, search vectors included, past the API. */
export async function storeMessages(harness: Harness, convId: string, senderId: string, rows: { seq: number; createdAt: number; text: string }[]): Promise<void> {
  await harness.database.db.transaction(async (tx) => {
    await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id, created_at)
      select ${convId}::uuid, r.seq, ${senderId}, 'stored-' || r.seq, to_timestamp(r.ms / 1000.0)
      from unnest(${sql.param(rows.map((r) => r.seq))}::int8[], ${sql.param(rows.map((r) => r.createdAt))}::int8[]) as r(seq, ms)`);
    await tx.execute(sql`insert into message_bodies (conv_id, seq, text, search_terms)
      select ${convId}::uuid, r.seq, r.text, r.terms::tsvector
      from unnest(${sql.param(rows.map((r) => r.seq))}::int8[], ${sql.param(rows.map((r) => r.text))}::text[],
        ${sql.param(rows.map((r) => searchVector(convId, r.text)))}::text[]) as r(seq, text, terms)`);
    await tx.execute(sql`update conversations set max_seq = ${rows.length}, last_activity_at = to_timestamp(${rows.at(-1)!.createdAt} / 1000.0)
      where id = ${convId}::uuid`);
  });
}

/** Inserts `count` messages from `senderId` into `convId` in one set-based statement (fast fixtures). */
export async function seedMessages(harness: Harness, convId: string, senderId: string, count: number): Promise<void> {
  await harness.database.db.transaction(async (tx) => {
    await tx.execute(sql`insert into messages (conv_id, seq, sender_id, client_msg_id)
      select ${convId}, c.max_seq + g, ${senderId}, 'seed-' || (c.max_seq + g)
      from conversations c, generate_series(1, ${count}) g where c.id = ${convId}`);
    await tx.execute(sql`insert into message_bodies (conv_id, seq, text)
      select ${convId}, c.max_seq + g, 'message ' || (c.max_seq + g)
      from conversations c, generate_series(1, ${count}) g where c.id = ${convId}`);
    await tx.execute(sql`update conversations set max_seq = max_seq + ${count} where id = ${convId}`);
  });
}
