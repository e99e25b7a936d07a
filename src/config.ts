import { MAX_RETENTION_DAYS, MAX_RETENTION_MESSAGES, type RetentionPolicy } from './history/retention.ts';

/**
 * The server's configuration, read from the environment in one place. Pure:
 * it takes the environment as an argument and either answers a config or the
 * list of what is wrong with it.
 */

/** One rate limit: `perSecond` on average, at most `burst` at once. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** The per-user rate limits, by what they count. */
export interface RateLimitSettings {
  send: RateLimit;
  /** Each other mutation, counted separately per mutation. */
  otherMutations: RateLimit;
  /** Subscriptions started over WebSocket (subscribe, complete, subscribe again...). */
  subscribe: RateLimit;
  /** WebSocket connections opened. */
  connect: RateLimit;
}

/** Where archive segments live (src/archive/segmentStore.ts). */
export type SegmentStoreSettings =
  /** `dir` null: archive/ in the data folder. */
  | { kind: 'folder'; dir: string | null }
  | {
      kind: 's3';
      bucket: string;
      /** AWS_ENDPOINT_URL: an S3-compatible server (addressed path-style); null: AWS itself. */
      endpoint: string | null;
      /** null: the AWS SDK finds it (its shared config file). */
      region: string | null;
      /** null: the AWS SDK's own chain (shared credentials file, instance or task role). */
      credentials: { accessKeyId: string; secretAccessKey: string } | null;
    };

/** The cold archive (src/archive/): what is archived, when, where it goes, and the read cache. */
export interface ArchiveSettings {
  /** Archive the bodies of messages older than this many days; null: no archiving. */
  afterDays: number | null;
  /** A conversation's newest seqs that are never archived. */
  keepNewest: number;
  /** Run the archiver in the server process every this many seconds; null: only `backscroll archive`. */
  intervalSeconds: number | null;
  store: SegmentStoreSettings;
  /** Decoded segments kept in memory per process, in bytes (ARCHIVE_CACHE_MB). */
  cacheBytes: number;
  /** How long a read waits for a segment that is not cached (ARCHIVE_READ_TIMEOUT_MS); past it a page is cut short. */
  readTimeoutMs: number;
  /** The archiver rests this many times as long as each segment took (ARCHIVE_REST_RATIO), so reads keep their rate. */
  restRatio: number;
}

/** Read replicas (DATABASE_REPLICA_URLS): where query operations read. */
interface ReplicaSettings {
  /** Each replica's URL, in the order given (its index names it in metrics and /readyz); empty: none. */
  urls: string[];
  /** How long a read with a consistency token waits for a replica to replay that far before it reads from the primary. */
  maxWaitMs: number;
  /** A replica whose replay trails what it has received by more than this is out of rotation. */
  maxLagMs: number;
  /**
   * How long a read waits for a replica's answer before it is retried on the
   * primary and the replica leaves rotation, its connections dropped: what a
   * replica that hangs (a frozen host, a network black hole) costs a read.
   * Above STATEMENT_TIMEOUT_MS + 1 s, every statement's deadline, it changes
   * nothing.
   */
  readTimeoutMs: number;
}

/** Everything the server can be configured with. */
export interface Config {
  port: number;
  /**
   * The interface to listen on: HOST, else the loopback interface when the
   * Sandbox page carries a development token (`embedsSandboxToken`), else
   * null for all interfaces.
   */
  host: string | null;
  /** `NODE_ENV=production`. */
  production: boolean;
  /** HS256 secret; null in development, where a per-data-folder secret is used. */
  jwtSecret: string | null;
  /** An identity provider's key set for RS256/ES256 tokens. */
  jwtJwksUrl: string | null;
  /** Required `iss` and `aud` claims, when set. */
  jwtIssuer: string | null;
  jwtAudience: string | null;
  /** PostgreSQL URL; null means embedded PGlite in `dataDir`. */
  databaseUrl: string | null;
  /** Read replicas of that PostgreSQL and how reads use them; see src/db/replicaSet.ts. */
  replicas: ReplicaSettings;
  dataDir: string;
  /** Schema introspection (Sandbox, codegen against the live server). */
  introspection: boolean;
  /** Apollo Sandbox on GET /graphql. */
  landingPage: boolean;
  /** How long a sender may revoke their own message. */
  revokeWindowSeconds: number;
  /** How long a sender may edit their own message; null: any time. */
  editWindowSeconds: number | null;
  /** Connections in the postgres.js pool (per worker process). */
  poolSize: number;
  /** Connections in the read pool query operations' statements pipeline on (per worker process; 0: none, src/db/pipelinedReads.ts). */
  readPoolSize: number;
  /** PostgreSQL's statement_timeout for the server's connections, in milliseconds. */
  statementTimeoutMs: number;
  /** Server processes sharing the port (node:cluster); more than one needs PostgreSQL. */
  workers: number;
  /** How far each process's heap may grow past its live data before a full collection, in percent; 0: V8's own choice (src/heapGrowth.ts). */
  heapGrowthPercent: number;
  /** Per-user limits, shared by every server process on one PostgreSQL; see src/graphql/gate/rateLimiter.ts. */
  rateLimits: RateLimitSettings;
  /** Open WebSocket connections one user may hold at once, across every server process. */
  maxSocketsPerUser: number;
  /** The database time one request (or one live event's view) may use in all, in milliseconds. */
  requestDatabaseTimeMs: number;
  /** What one operation may ask for; see src/graphql/queryLimits.ts. */
  queryLimits: { nodes: number; depth: number; aliases: number; tokens: number; directives: number };
  logLevel: string;
  /** The server's retention limits (RETENTION_DAYS, RETENTION_MAX_MESSAGES); conversations may only shorten them. */
  retention: RetentionPolicy;
  /** Run the purge in the server process every this many seconds; null: only `backscroll purge`. */
  purgeIntervalSeconds: number | null;
  /** How long change-feed entries are kept before a client must reload. */
  changeFeedDays: number;
  /**
   * The trusted documents manifest (TRUSTED_DOCUMENTS) and whether only its
   * documents run (TRUSTED_DOCUMENTS_ONLY, on by default in production);
   * null: any document runs, and automatic persisted queries are on.
   */
  trustedDocuments: { path: string; only: boolean } | null;
  /** The bearer token `GET /metrics` requires (METRICS_TOKEN); null: metrics are open to whoever reaches the port. */
  metricsToken: string | null;
  archive: ArchiveSettings;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** One environment variable the server reads. */
export interface Setting {
  name: string;
  /** The value that applies while it is unset, outside production (`meaning` says what production changes); null: none. */
  default: string | null;
  meaning: string;
}

/**
 * Every environment variable `readConfig` reads, once: it can read no other
 * (its environment is typed by these names), `backscroll --help` prints this
 * list, test/unit/config.test.ts checks each default and that each name is
 * read, and the README's configuration table may name only these.
 */
export const SETTINGS = [
  { name: 'PORT', default: '4000', meaning: 'HTTP port of /graphql' },
  { name: 'HOST', default: null, meaning: 'interface to listen on; unset: all, or 127.0.0.1 when Sandbox carries a dev token' },
  { name: 'NODE_ENV', default: null, meaning: '`production` requires a token key and turns introspection and Sandbox off' },
  { name: 'JWT_SECRET', default: null, meaning: 'HS256 secret, 32+ characters (development: a per-data-folder secret)' },
  { name: 'JWT_JWKS_URL', default: null, meaning: "an identity provider's key set: its RS256/ES256 tokens are accepted" },
  { name: 'JWT_ISSUER', default: null, meaning: 'the `iss` every token must carry' },
  { name: 'JWT_AUDIENCE', default: null, meaning: 'the `aud` every token must carry' },
  { name: 'DATABASE_URL', default: null, meaning: 'postgres://… to use PostgreSQL; unset: embedded PGlite' },
  { name: 'DATABASE_REPLICA_URLS', default: null, meaning: 'comma-separated postgres:// URLs of read replicas of DATABASE_URL; queries read there' },
  { name: 'REPLICA_MAX_WAIT_MS', default: '50', meaning: 'how long a read with a consistency token waits for a replica before using the primary' },
  { name: 'REPLICA_MAX_LAG_MS', default: '1000', meaning: 'a replica whose replay trails what it received by more than this leaves rotation' },
  { name: 'REPLICA_READ_TIMEOUT_MS', default: '2000', meaning: 'a read a replica leaves unanswered this long is retried on the primary; the replica leaves rotation' },
  { name: 'BACKSCROLL_DATA_DIR', default: '.backscroll', meaning: 'where PGlite and the development secret live' },
  { name: 'BACKSCROLL_INTROSPECTION', default: 'on', meaning: 'schema introspection (off by default in production)' },
  { name: 'BACKSCROLL_LANDING_PAGE', default: 'on', meaning: 'Apollo Sandbox on GET /graphql (off by default in production)' },
  { name: 'REVOKE_WINDOW_SECONDS', default: '120', meaning: 'how long a sender may revoke their own message' },
  { name: 'EDIT_WINDOW_SECONDS', default: null, meaning: 'how long a sender may edit their own message; unset: any time' },
  { name: 'DATABASE_POOL_SIZE', default: '10', meaning: 'PostgreSQL connections per server process' },
  { name: 'DATABASE_READ_POOL_SIZE', default: '2', meaning: "PostgreSQL connections per server process that query operations' statements pipeline on (0: none)" },
  { name: 'BACKSCROLL_WORKERS', default: '1', meaning: 'server processes sharing the port (more than one needs DATABASE_URL)' },
  { name: 'HEAP_GROWTH_PERCENT', default: '100', meaning: "how far a process's heap grows past its live data before a full collection (0: V8's choice)" },
  { name: 'STATEMENT_TIMEOUT_MS', default: '5000', meaning: 'PostgreSQL statement_timeout of the server connections' },
  { name: 'REQUEST_DATABASE_TIME_MS', default: '5000', meaning: 'database time one request (or live event view) may use in all' },
  { name: 'RATE_LIMIT_SEND_PER_SECOND', default: '20', meaning: 'sendMessage calls per user per second' },
  { name: 'RATE_LIMIT_SEND_BURST', default: '40', meaning: 'sendMessage calls per user at once' },
  { name: 'RATE_LIMIT_MUTATIONS_PER_SECOND', default: '10', meaning: 'calls of each other mutation per user per second' },
  { name: 'RATE_LIMIT_MUTATIONS_BURST', default: '20', meaning: 'calls of each other mutation per user at once' },
  { name: 'RATE_LIMIT_SUBSCRIBE_PER_SECOND', default: '10', meaning: 'subscriptions started per user per second' },
  { name: 'RATE_LIMIT_SUBSCRIBE_BURST', default: '100', meaning: 'subscriptions started per user at once' },
  { name: 'RATE_LIMIT_CONNECT_PER_SECOND', default: '1', meaning: 'WebSocket connections opened per user per second' },
  { name: 'RATE_LIMIT_CONNECT_BURST', default: '20', meaning: 'WebSocket connections opened per user at once' },
  { name: 'MAX_SOCKETS_PER_USER', default: '10', meaning: 'WebSocket connections one user may hold open' },
  { name: 'MAX_QUERY_NODES', default: '10000', meaning: 'the largest cost one operation may have' },
  { name: 'MAX_QUERY_DEPTH', default: '12', meaning: 'the deepest selection one operation may have' },
  { name: 'MAX_QUERY_ALIASES', default: '15', meaning: 'aliases one operation may use' },
  { name: 'MAX_QUERY_TOKENS', default: '2000', meaning: 'tokens one document may have' },
  { name: 'MAX_QUERY_DIRECTIVES', default: '50', meaning: 'directives one operation may use' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'pino log level (silent to mute)' },
  { name: 'RETENTION_DAYS', default: null, meaning: "the server's retention in days; unset: keep everything" },
  { name: 'RETENTION_MAX_MESSAGES', default: null, meaning: "the server's retention in messages per conversation; unset: keep all" },
  { name: 'PURGE_INTERVAL_SECONDS', default: null, meaning: 'run the purge in the server this often; unset: only `backscroll purge`' },
  { name: 'CHANGE_FEED_DAYS', default: '30', meaning: 'how long change-feed entries are kept' },
  { name: 'METRICS_TOKEN', default: null, meaning: 'the bearer token GET /metrics requires; unset: open' },
  { name: 'TRUSTED_DOCUMENTS', default: null, meaning: 'path of a trusted-documents manifest' },
  { name: 'TRUSTED_DOCUMENTS_ONLY', default: 'off', meaning: "run only the manifest's documents (on by default in production)" },
  { name: 'ARCHIVE_AFTER_DAYS', default: null, meaning: 'archive the bodies of messages older than this many days; unset: no archiving' },
  { name: 'ARCHIVE_KEEP_NEWEST', default: '200', meaning: "a conversation's newest messages that are never archived" },
  { name: 'ARCHIVE_INTERVAL_SECONDS', default: null, meaning: 'run the archiver in the server this often; unset: only `backscroll archive`' },
  { name: 'ARCHIVE_DIR', default: null, meaning: 'folder of archive segments; unset: archive/ in BACKSCROLL_DATA_DIR' },
  { name: 'ARCHIVE_S3_BUCKET', default: null, meaning: 'keep archive segments in this S3 bucket instead of a folder' },
  { name: 'AWS_ENDPOINT_URL', default: null, meaning: 'an S3-compatible server for ARCHIVE_S3_BUCKET; unset: AWS' },
  { name: 'AWS_REGION', default: null, meaning: "the bucket's region; unset: the AWS SDK's shared config" },
  { name: 'AWS_ACCESS_KEY_ID', default: null, meaning: "S3 credentials, with AWS_SECRET_ACCESS_KEY; unset: the AWS SDK's own chain" },
  { name: 'AWS_SECRET_ACCESS_KEY', default: null, meaning: 'the secret of AWS_ACCESS_KEY_ID' },
  { name: 'ARCHIVE_CACHE_MB', default: '64', meaning: 'decoded archive segments kept in memory per process, in MB' },
  { name: 'ARCHIVE_READ_TIMEOUT_MS', default: '800', meaning: 'how long a read waits for an archive segment; past it the page is cut short' },
  { name: 'ARCHIVE_REST_RATIO', default: '1', meaning: 'the archiver rests this many times as long as each segment took (0: flat out)' },
] as const satisfies readonly Setting[];

/** The name of a setting in `SETTINGS`. */
type SettingName = (typeof SETTINGS)[number]['name'];

type Env = Partial<Record<SettingName, string>>;

/** Reads the configuration from `env` (usually `process.env`). */
export function readConfig(env: Env): ConfigResult {
  const problems: string[] = [];
  const production = env.NODE_ENV === 'production';
  const integer = (name: SettingName, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(value >= min && value <= max)) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}".`);
      return fallback;
    }
    return value;
  };
  /** A positive integer up to `max`, or null when unset (no limit). */
  const optionalInteger = (name: SettingName, max: number): number | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return null;
    return integer(name, 1, 1, max);
  };
  const flag = (name: SettingName, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false, got "${raw}".`);
    return fallback;
  };
  const jwtSecret = env.JWT_SECRET && env.JWT_SECRET.length > 0 ? env.JWT_SECRET : null;
  const jwtJwksUrl = env.JWT_JWKS_URL && env.JWT_JWKS_URL.length > 0 ? env.JWT_JWKS_URL : null;
  if (jwtJwksUrl !== null && !/^https?:\/\/\S+$/.test(jwtJwksUrl)) problems.push(`JWT_JWKS_URL must be an http(s) URL, got "${jwtJwksUrl}".`);
  if (production && jwtSecret === null && jwtJwksUrl === null) {
    problems.push('JWT_SECRET (an HS256 secret of at least 32 characters) or JWT_JWKS_URL must be set when NODE_ENV=production.');
  }
  if (jwtSecret !== null && jwtSecret.length < 32) {
    problems.push('JWT_SECRET must be at least 32 characters long.');
  }
  const config: Config = {
    port: integer('PORT', 4000, 0, 65535),
    host: null,
    production,
    jwtSecret,
    jwtJwksUrl,
    jwtIssuer: env.JWT_ISSUER || null,
    jwtAudience: env.JWT_AUDIENCE || null,
    databaseUrl: env.DATABASE_URL && env.DATABASE_URL.length > 0 ? env.DATABASE_URL : null,
    replicas: {
      urls: replicaUrls(env.DATABASE_REPLICA_URLS, problems),
      maxWaitMs: integer('REPLICA_MAX_WAIT_MS', 50, 0, 60_000),
      maxLagMs: integer('REPLICA_MAX_LAG_MS', 1000, 0, 3_600_000),
      // 2 s: several times the slowest read measured here (a search, 120-300
      // ms with its index's pending list full), and like the probes' 3.5 s
      // within the 5 s in which a failed replica must stop costing reads.
      readTimeoutMs: integer('REPLICA_READ_TIMEOUT_MS', 2000, 10, 3_600_000),
    },
    dataDir: env.BACKSCROLL_DATA_DIR && env.BACKSCROLL_DATA_DIR.length > 0 ? env.BACKSCROLL_DATA_DIR : '.backscroll',
    introspection: flag('BACKSCROLL_INTROSPECTION', !production),
    landingPage: flag('BACKSCROLL_LANDING_PAGE', !production),
    revokeWindowSeconds: integer('REVOKE_WINDOW_SECONDS', 120, 0, 365 * 24 * 3600),
    editWindowSeconds: optionalInteger('EDIT_WINDOW_SECONDS', 100 * 365 * 24 * 3600),
    poolSize: integer('DATABASE_POOL_SIZE', 10, 1, 1000),
    readPoolSize: integer('DATABASE_READ_POOL_SIZE', 2, 0, 1000),
    workers: integer('BACKSCROLL_WORKERS', 1, 1, 64),
    heapGrowthPercent: integer('HEAP_GROWTH_PERCENT', 100, 0, 1000),
    statementTimeoutMs: integer('STATEMENT_TIMEOUT_MS', 5000, 10, 3_600_000),
    rateLimits: {
      send: { perSecond: integer('RATE_LIMIT_SEND_PER_SECOND', 20, 1, 100_000), burst: integer('RATE_LIMIT_SEND_BURST', 40, 1, 100_000) },
      otherMutations: {
        perSecond: integer('RATE_LIMIT_MUTATIONS_PER_SECOND', 10, 1, 100_000),
        burst: integer('RATE_LIMIT_MUTATIONS_BURST', 20, 1, 100_000),
      },
      subscribe: {
        perSecond: integer('RATE_LIMIT_SUBSCRIBE_PER_SECOND', 10, 1, 100_000),
        burst: integer('RATE_LIMIT_SUBSCRIBE_BURST', 100, 1, 100_000),
      },
      connect: {
        perSecond: integer('RATE_LIMIT_CONNECT_PER_SECOND', 1, 1, 100_000),
        burst: integer('RATE_LIMIT_CONNECT_BURST', 20, 1, 100_000),
      },
    },
    maxSocketsPerUser: integer('MAX_SOCKETS_PER_USER', 10, 1, 10_000),
    requestDatabaseTimeMs: integer('REQUEST_DATABASE_TIME_MS', 5000, 10, 3_600_000),
    queryLimits: {
      nodes: integer('MAX_QUERY_NODES', 10_000, 1, 10_000_000),
      depth: integer('MAX_QUERY_DEPTH', 12, 1, 1000),
      aliases: integer('MAX_QUERY_ALIASES', 15, 0, 10_000),
      tokens: integer('MAX_QUERY_TOKENS', 2000, 10, 1_000_000),
      directives: integer('MAX_QUERY_DIRECTIVES', 50, 0, 10_000),
    },
    logLevel: logLevel(env.LOG_LEVEL, problems),
    retention: {
      days: optionalInteger('RETENTION_DAYS', MAX_RETENTION_DAYS),
      maxMessages: optionalInteger('RETENTION_MAX_MESSAGES', MAX_RETENTION_MESSAGES),
    },
    purgeIntervalSeconds: optionalInteger('PURGE_INTERVAL_SECONDS', 7 * 24 * 3600),
    changeFeedDays: integer('CHANGE_FEED_DAYS', 30, 1, 3650),
    trustedDocuments: null,
    metricsToken: env.METRICS_TOKEN && env.METRICS_TOKEN.length > 0 ? env.METRICS_TOKEN : null,
    archive: {
      afterDays: optionalInteger('ARCHIVE_AFTER_DAYS', 36_500),
      keepNewest: integer('ARCHIVE_KEEP_NEWEST', 200, 0, 1_000_000_000),
      intervalSeconds: optionalInteger('ARCHIVE_INTERVAL_SECONDS', 7 * 24 * 3600),
      store: { kind: 'folder', dir: null },
      cacheBytes: integer('ARCHIVE_CACHE_MB', 64, 0, 1_000_000) * 1024 * 1024,
      readTimeoutMs: integer('ARCHIVE_READ_TIMEOUT_MS', 800, 1, 600_000),
      restRatio: integer('ARCHIVE_REST_RATIO', 1, 0, 100),
    },
  };
  config.archive.store = segmentStore(env, problems);
  if (config.archive.intervalSeconds !== null && config.archive.afterDays === null) {
    problems.push('ARCHIVE_INTERVAL_SECONDS needs ARCHIVE_AFTER_DAYS, the age at which message bodies are archived.');
  }
  const trustedOnly = flag('TRUSTED_DOCUMENTS_ONLY', production);
  if (env.TRUSTED_DOCUMENTS) config.trustedDocuments = { path: env.TRUSTED_DOCUMENTS, only: trustedOnly };
  else if (env.TRUSTED_DOCUMENTS_ONLY && trustedOnly) {
    problems.push('TRUSTED_DOCUMENTS_ONLY=true needs TRUSTED_DOCUMENTS, the path of the manifest of trusted documents.');
  }
  if (config.workers > 1 && config.databaseUrl === null) {
    problems.push('BACKSCROLL_WORKERS above 1 needs DATABASE_URL: embedded PGlite serves one process.');
  }
  config.host = listenHost(env.HOST, embedsSandboxToken(config), problems);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
}

/**
 * Whether the Sandbox page may carry a development token, which anyone who
 * loads the page can use: only for the embedded demo (no DATABASE_URL, so
 * PGlite) signed with the generated development secret (no JWT_SECRET), with
 * the page on, outside production. A token signed with a real secret, or for
 * a real database, is never handed to whoever reaches the port.
 */
export function embedsSandboxToken(config: Pick<Config, 'production' | 'landingPage' | 'databaseUrl' | 'jwtSecret'>): boolean {
  return !config.production && config.landingPage && config.databaseUrl === null && config.jwtSecret === null;
}

/** ARCHIVE_S3_BUCKET and the AWS settings, else the folder ARCHIVE_DIR (null: archive/ in the data folder). */
function segmentStore(env: Env, problems: string[]): SegmentStoreSettings {
  const given = (name: SettingName) => (env[name] !== undefined && env[name] !== '' ? env[name] : null);
  const [dir, bucket, endpoint, region] = [given('ARCHIVE_DIR'), given('ARCHIVE_S3_BUCKET'), given('AWS_ENDPOINT_URL'), given('AWS_REGION')];
  const [accessKeyId, secretAccessKey] = [given('AWS_ACCESS_KEY_ID'), given('AWS_SECRET_ACCESS_KEY')];
  if (bucket === null) return { kind: 'folder', dir };
  if (dir !== null) problems.push(`ARCHIVE_DIR and ARCHIVE_S3_BUCKET name two places for the archive; set one, got "${dir}" and "${bucket}".`);
  if (endpoint !== null && !/^https?:\/\/\S+$/.test(endpoint)) problems.push(`AWS_ENDPOINT_URL must be an http(s) URL, got "${endpoint}".`);
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    problems.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither for the AWS SDK\'s own credentials.');
  }
  const credentials = accessKeyId !== null && secretAccessKey !== null ? { accessKeyId, secretAccessKey } : null;
  return { kind: 's3', bucket, endpoint, region, credentials };
}

/**
 * DATABASE_REPLICA_URLS: postgres:// URLs separated by commas (white space
 * around each is dropped). Checked here, so a typo fails the start instead
 * of leaving a replica silently out of rotation for ever. On PGlite they are
 * ignored, with a line in the log, by the wiring (src/cli.ts).
 */
function replicaUrls(raw: string | undefined, problems: string[]): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const urls = raw.split(',').map((url) => url.trim());
  for (const [index, url] of urls.entries()) {
    let valid = false;
    try {
      valid = ['postgres:', 'postgresql:'].includes(new URL(url).protocol);
    } catch {
      valid = false;
    }
    // Only the position is named: a URL may carry a password.
    if (!valid) problems.push(`DATABASE_REPLICA_URLS must be postgres:// URLs separated by commas; entry ${index + 1} of ${urls.length} is not one.`);
  }
  return urls;
}

// A host name or an IP address (IPv6 without brackets, as node:net takes it).
const HOST = /^[A-Za-z0-9.:%-]{1,253}$/;

/** HOST as given; unset, the loopback interface while a token is embedded (only this machine gets the page), else all. */
function listenHost(raw: string | undefined, tokenEmbedded: boolean, problems: string[]): string | null {
  if (raw === undefined || raw === '') return tokenEmbedded ? '127.0.0.1' : null;
  if (HOST.test(raw)) return raw;
  problems.push(`HOST must be a host name or an IP address such as 127.0.0.1, 0.0.0.0 or ::, got "${raw}".`);
  return null;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(raw: string | undefined, problems: string[]): string {
  if (raw === undefined || raw === '') return 'info';
  if (LOG_LEVELS.includes(raw)) return raw;
  problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}".`);
  return 'info';
}
