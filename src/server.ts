/**
 * Wiring: Apollo Server over the schema and resolvers, behind the thin HTTP
 * handler, on one `node:http` server. Nothing imports this but the CLI and
 * the tests' server harness.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { type IExecutableSchemaDefinition, makeExecutableSchema } from '@graphql-tools/schema';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { createTokenVerifier } from './auth/tokens.ts';
import type { Config } from './config.ts';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type { Database } from './db/client.ts';
import { observeArchiveReads } from './archive/reader.ts';
import type { ReplicaSet } from './db/replicaSet.ts';
import { createRunner, type SqlClient } from './db/runner.ts';
import { consistencyPlugin } from './graphql/consistencyPlugin.ts';
import { createContext, type RequestContext, type RequestStats } from './graphql/context.ts';
import { createFormatError } from './graphql/formatError.ts';
import { jitGateway } from './graphql/jitGateway.ts';
import { queryLimits } from './graphql/queryLimits.ts';
import { gatePlugin } from './graphql/gate/gatePlugin.ts';
import { createOperationGate } from './graphql/gate/operationGate.ts';
import { createRateLimiter } from './graphql/gate/rateLimiter.ts';
import { resolvers } from './graphql/resolvers/index.ts';
import { trustedDocumentsGate } from './graphql/trustedDocuments.ts';
import { createGraphQLHandler } from './http/graphqlHandler.ts';
import { answerProbe, isProbe, type ReadinessCheck } from './http/healthHandler.ts';
import { answerMetrics, isMetrics } from './http/metricsHandler.ts';
import { readArchiveTotals } from './metrics/archiveMetrics.ts';
import { metricsPlugin } from './metrics/metricsPlugin.ts';
import { createServerMetrics } from './metrics/serverMetrics.ts';
import { httpRefusesSubscriptions } from './graphql/httpRefusesSubscriptions.ts';
import { createLiveEvents } from './graphql/liveEvents.ts';
import { startEventHub } from './realtime/hub.ts';
import { createPublisher } from './store/publisher.ts';
import { createSendCoalescer } from './store/sendCoalescer.ts';
import { routeSends, serveForwardedSend } from './store/routedSends.ts';
import type { SendForwarding } from './sendForwarding.ts';
import { createSocketLimit } from './realtime/socketLimit.ts';
import { startSubscriptionServer } from './realtime/webSocketServer.ts';
import { requestLog } from './graphql/requestLog.ts';
import type { Logger } from './log.ts';

const typeDefs = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');

const GRAPHQL_PATH = '/graphql';
const MAX_BODY_BYTES = 1024 * 1024;

export interface ServerOptions {
  config: Config;
  /** The database client; each request gets its own counting runner over it. */
  client: SqlClient;
  /** The read pool of `client`'s database, which query operations' statements pipeline on (src/db/pipelinedReads.ts); absent: none. */
  readClient?: SqlClient;
  /** Read replicas of `client`'s database (DATABASE_REPLICA_URLS): query operations read there; the caller closes them. */
  replicas?: ReplicaSet;
  /** The HS256 secret tokens are verified with; null to accept only JWT_JWKS_URL tokens. */
  jwtSecret: string | null;
  logger: Logger;
  /** Development only: a token, operations and their variables to preload in Apollo Sandbox. */
  sandbox?: { token: string; document: string; variables?: Record<string, unknown> };
  /** Why the server cannot serve yet (database down, migrations behind), or null; answers `/readyz`. */
  readiness?: ReadinessCheck;
  /** Called after each GraphQL request with what it did (tests, metrics). */
  onRequestStats?(stats: RequestStats, req: IncomingMessage): void;
  /** A cluster worker's way to the others: each conversation's sends are stored by one worker (src/store/routedSends.ts). */
  sendForwarding?: SendForwarding;
}

export interface RunningServer {
  url: string;
  port: number;
  httpServer: Server;
  stop(): Promise<void>;
}

/** How long an idle HTTP connection is kept open: see `startServer`. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * Starts the server on `port` (0 picks a free one) and resolves once it
 * listens: GraphQL over HTTP, and subscriptions over WebSocket on the same
 * path, fed by this process's one LISTEN connection.
 */
export async function startServer(options: ServerOptions, port: number): Promise<RunningServer> {
  const { config, client, logger } = options;
  // Idle keep-alive connections stay open longer than a client or load
  // balancer keeps them (60 s is the usual balancer idle timeout), so the
  // client, not the server, closes them. With Node's default of 5 s, a client
  // that reused a connection just as the server closed it got ECONNRESET on
  // a request (seen in CI on a busy box, where a client's timer ran late).
  const httpServer = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: KEEP_ALIVE_TIMEOUT_MS + 1000 });
  const landingPage = config.landingPage
    ? ApolloServerPluginLandingPageLocalDefault({
        embed: options.sandbox ? { initialState: { sharedHeaders: { Authorization: `Bearer ${options.sandbox.token}` } } } : true,
        document: options.sandbox?.document,
        variables: options.sandbox?.variables,
        includeCookies: false,
        footer: false,
      })
    : ApolloServerPluginLandingPageDisabled();
  // Subscriptions are counted by the event hub, which starts after Apollo; a registry per server.
  let openSubscriptions = () => 0;
  // Test only (test/postgres/lostPublication.test.ts): the process dies between a commit and its announcement.
  const publisher = createPublisher(client, logger, { dieBeforePublish: process.env.BACKSCROLL_FAULT === 'die-before-publish' });
  const metrics = createServerMetrics({
    pools: [client.usage, options.readClient?.usage],
    replicas: options.replicas,
    openSubscriptions: () => openSubscriptions(),
    archiveTotals: () => readArchiveTotals(createRunner(client)),
  });
  const localSends = createSendCoalescer(publisher, (stored) => metrics.observeSendStatement(stored));
  const forwarding = options.sendForwarding;
  const writes = {
    publisher,
    sends: forwarding ? routeSends(localSends, forwarding.forwarder, { counted: (answer) => metrics.countForwardedSend(answer) }) : localSends,
  };
  // The segment reader is the process's (setProcessArchive); its reads are counted here while this server runs.
  const leaveArchiveReads = observeArchiveReads(metrics.archiveReads);
  const limits = queryLimits(config);
  const trusted = trustedDocumentsGate(config);
  const schema = makeExecutableSchema({ typeDefs, resolvers: resolvers as IExecutableSchemaDefinition['resolvers'] });
  // Counters every process on one PostgreSQL shares; PGlite serves one process, so memory is exact there.
  const limiter = createRateLimiter(
    config.rateLimits,
    client.kind === 'postgres' ? { kind: 'postgres', db: drizzlePostgres(client.sql) as unknown as Database, runner: createRunner(client) } : { kind: 'memory' },
  );
  const gate = createOperationGate({ schema, maxCost: config.queryLimits.nodes, limiter, path: GRAPHQL_PATH });
  const apollo = new ApolloServer<RequestContext>({
    gateway: jitGateway(schema),
    introspection: config.introspection,
    persistedQueries: trusted?.persistedQueries,
    includeStacktraceInErrorResponses: false,
    // The CLI owns shutdown: it stops the server, then closes the database, then exits.
    stopOnTerminationSignals: false,
    hideSchemaDetailsFromClientErrors: config.production,
    formatError: createFormatError((error) => logger.error({ err: error }, 'unexpected error in a GraphQL request')),
    // Cache hints are not used (history is per-viewer and private), and the
    // plugin wraps every field resolver: off.
    validationRules: [...limits.validationRules, httpRefusesSubscriptions(GRAPHQL_PATH)],
    parseOptions: limits.parseOptions,
    plugins: [
      requestLog(logger),
      metricsPlugin(metrics),
      ...limits.plugins,
      gatePlugin(gate),
      // After the gate, whose reading of the operation it goes by. Only with
      // replicas or a read pool, where a query operation reads elsewhere than
      // a mutation: without either, every request would pay its two hooks
      // for nothing.
      ...((options.replicas?.count ?? 0) > 0 || options.readClient !== undefined ? [consistencyPlugin()] : []),
      landingPage,
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer }),
    ],
  });
  await apollo.start();
  const authenticate = createTokenVerifier({
    secret: options.jwtSecret,
    jwksUrl: config.jwtJwksUrl,
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
  });
  const handler = createGraphQLHandler({
    apollo,
    path: GRAPHQL_PATH,
    maxBodyBytes: MAX_BODY_BYTES,
    authenticate,
    makeContext: (auth, stats, given) => createContext(client, config, auth, stats, writes, { replicas: options.replicas ?? null, reads: options.readClient ?? null, given }),
    onRequestStats: options.onRequestStats,
    onError: (error) => logger.error({ err: error }, 'HTTP request failed'),
    onRefused: (refusal) => {
      logger.info(refusal, 'http request refused');
      metrics.countError(refusal.code);
    },
    admit: trusted?.admitHttp,
  });
  const readiness = options.readiness ?? (async () => null);
  httpServer.on('request', (req, res) => {
    if (isProbe(req.url)) void answerProbe(req, res, readiness, options.replicas && (() => options.replicas!.report()));
    else if (isMetrics(req.url)) void answerMetrics(req, res, metrics, config.metricsToken);
    else void handler(req, res);
  });
  const hub = await startEventHub(client, logger);
  openSubscriptions = () => hub.listenerCount();
  const live = createLiveEvents(hub, client, config);
  const formatError = createFormatError((error) => logger.error({ err: error }, 'unexpected error in a GraphQL subscription'));
  const sockets = createSocketLimit(client, config.maxSocketsPerUser, (error) => logger.error({ err: error }, 'socket lease bookkeeping failed'));
  const subscriptions = startSubscriptionServer({
    httpServer,
    path: GRAPHQL_PATH,
    schema,
    authenticate,
    makeContext: (auth, resync) => ({ ...createContext(client, config, auth, { statements: 0, texts: [], batches: [] }, writes), live, resync }),
    limits: { validationRules: limits.validationRules, maxTokens: limits.parseOptions.maxTokens, maxCost: config.queryLimits.nodes },
    gate,
    limiter,
    sockets,
    formatError,
    maxPayloadBytes: MAX_BODY_BYTES,
    production: config.production,
    consistencyTokens: (options.replicas?.count ?? 0) > 0,
    admit: trusted?.admitSubscription,
  });
  hub.onGap(() => subscriptions.resyncAll('Live events may have been missed; reconnect and fill the gap.'));
  // Other workers' sends to this worker's conversations, on a runner of the process's own (no request carries them here).
  const forwardedRunner = createRunner(client);
  forwarding?.serve((convId, send) => serveForwardedSend(localSends, forwardedRunner, convId, send));
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, config.host ?? undefined, () => resolve());
  });
  const actualPort = (httpServer.address() as AddressInfo).port;
  return {
    // The address it listens on when HOST names one; localhost for every interface (or none given).
    url: `http://${urlHost(config.host)}:${actualPort}${GRAPHQL_PATH}`,
    port: actualPort,
    httpServer,
    stop: async () => {
      // Sockets first: Apollo's drain waits for HTTP connections, not upgraded ones.
      await subscriptions.close();
      sockets.close();
      await apollo.stop();
      await forwarding?.stop();
      // What the last mutations committed is announced before the database closes.
      await publisher.close();
      await hub.close();
      leaveArchiveReads();
    },
  };
}

/** How a URL names the host the server listens on: localhost for every interface and for IPv4 loopback (as the README says), brackets around IPv6. */
function urlHost(host: string | null): string {
  if (host === null || host === '0.0.0.0' || host === '::' || host === '127.0.0.1') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
