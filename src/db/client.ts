/**
 * The database handle: PostgreSQL through postgres.js when a URL is given,
 * otherwise embedded PGlite in a data folder. Both are drizzle databases over
 * the same schema, so the store never asks which one it has.
 */
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import type { SqlClient } from './runner.ts';

/** The drizzle database type the store is written against. */
export type Database = PgDatabase<PgQueryResultHKT>;

/** Where the data lives: a PostgreSQL URL, an embedded data folder, or memory (tests). */
export type DatabaseTarget =
  /**
   * `statementTimeoutMs` 0: none (PostgreSQL's meaning), for migrations.
   * `deadlineMs`: a shorter bound than the default on how long a statement
   * may keep its caller waiting (deadline.ts), which is the statement
   * timeout plus time to reconnect.
   * `readPoolSize`: connections of a second pool for query operations'
   * statements (pipelinedReads.ts); unset or 0: none.
   */
  | { kind: 'postgres'; url: string; poolSize?: number; readPoolSize?: number; statementTimeoutMs?: number; deadlineMs?: number }
  | { kind: 'pglite'; dataDir: string }
  /** In memory; `snapshot` (from PGlite's `dumpDataDir`) skips initdb, which takes seconds. */
  | { kind: 'pglite-memory'; snapshot?: Blob };

/** An open database and the way to close it. */
export interface DatabaseHandle {
  /** drizzle over the same connection: migrations, seeding and tests' checks. */
  db: Database;
  /** The driver client the store's runners send through (see runner.ts). */
  client: SqlClient;
  /** The read pool query operations' statements go through (pipelinedReads.ts); null: none, they use `client`. */
  reads: SqlClient | null;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

const INT8_OID = 20;
const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;
/** Time for a (re)connect on top of the statement timeout before a request gives up on the database. */
const CONNECT_ALLOWANCE_MS = 1000;
/** Seconds between reconnect attempts while the database is down; postgres.js grows its own backoff to 20 s. */
const reconnectBackoff = (retries: number): number => Math.min(0.05 * 2 ** retries, 0.25);
/** int8 (seqs, counts) as JS numbers: seqs stay far below 2^53. */
const parseInt8 = (value: string): number => Number(value);

/** Opens the database named by `target`. */
export async function openDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === 'postgres') return openPostgres(target);
  // Loaded only when used: PGlite's module alone added 36 MB to the resident size of every process, PostgreSQL ones included.
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')]);
  let client: PGlite;
  if (target.kind === 'pglite') {
    mkdirSync(target.dataDir, { recursive: true });
    client = new PGlite(target.dataDir, { parsers: { [INT8_OID]: parseInt8 } });
  } else {
    client = new PGlite({ parsers: { [INT8_OID]: parseInt8 }, loadDataDir: target.snapshot });
  }
  await client.waitReady;
  const db = drizzlePglite(client);
  // One connection, one statement at a time: there is nothing to pipeline on.
  return {
    db: db as unknown as Database,
    client: { kind: 'pglite', pglite: client, usage: { inFlight: 0, size: 1 } },
    reads: null,
    kind: 'pglite',
    close: () => client.close(),
  };
}

/** A PostgreSQL pool: a database handle that can also be dropped at once. */
export interface PostgresHandle extends DatabaseHandle {
  client: Extract<SqlClient, { kind: 'postgres' }>;
  reads: Extract<SqlClient, { kind: 'postgres' }> | null;
  /**
   * Closes every connection now, failing what runs or waits on them
   * (CONNECTION_DESTROYED, a DatabaseUnavailableError), and refuses new
   * statements. For a server that stopped answering: `close` would wait its
   * whole timeout on it, and a cancel request would hang as well.
   */
  abandon(): Promise<void>;
}

/** Opens a postgres.js pool on `target` (and its read pool); it connects on its first statement, so this never waits. */
export function openPostgres(target: Extract<DatabaseTarget, { kind: 'postgres' }>): PostgresHandle {
  const statementTimeoutMs = target.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  // No statement timeout (0, migrations): no deadline either, unless given.
  const deadlineMs = Math.min(target.deadlineMs ?? Number.POSITIVE_INFINITY, statementTimeoutMs === 0 ? Number.POSITIVE_INFINITY : statementTimeoutMs + CONNECT_ALLOWANCE_MS);
  const drizzled = (size: number) => {
    const sql = postgresPool(target.url, size, statementTimeoutMs);
    const db = drizzlePostgres(sql);
    // Set after drizzle, which installs its own parsers (timestamps as text) on the same client.
    sql.options.parsers[INT8_OID] = parseInt8;
    const pool: Extract<SqlClient, { kind: 'postgres' }> = { kind: 'postgres', sql, deadlineMs, usage: { inFlight: 0, size } };
    return { db, client: pool };
  };
  const { db, client } = drizzled(target.poolSize ?? 10);
  // Parsed as the main pool's are, so a row reads the same from either.
  const reads = target.readPoolSize ? drizzled(target.readPoolSize).client : null;
  const pools = reads === null ? [client.sql] : [client.sql, reads.sql];
  return {
    db: db as unknown as Database,
    client,
    reads,
    kind: 'postgres',
    close: async () => {
      await Promise.all(pools.map((pool) => pool.end({ timeout: 5 })));
    },
    abandon: async () => {
      await Promise.all(pools.map((pool) => pool.end({ timeout: 0 })));
    },
  };
}

/** A postgres.js client of at most `max` connections to `connectionUrl`, set up as every server connection is. */
function postgresPool(connectionUrl: string, max: number, statementTimeoutMs: number): postgres.Sql {
  const { url, socketPath } = socketFromUrl(connectionUrl);
  return postgres(url, {
    max,
    onnotice: () => {},
    // A statement past the timeout is cancelled and frees its connection;
    // an unreachable database fails a request within seconds, not minutes.
    // jit off: the statements here are short index probes, and JIT
    // compilation of a generic plan cost 14-19 ms on an inbox page.
    // plan_cache_mode force_generic_plan: every prepared statement is
    // planned once per connection. The store's statements are written so
    // that no plan depends on the values (index-ordered seeks, bounded
    // walks: see sqlFragments.ts), and PostgreSQL's default kept choosing
    // custom plans for the page statements, re-planning each execution:
    // 0.5-1.0 ms of planning for a 0.2-0.3 ms page (2.6 ms a deep page
    // with the round trip, 0.7 ms generic).
    connection: { TimeZone: 'UTC', statement_timeout: statementTimeoutMs, jit: 'off', plan_cache_mode: 'force_generic_plan' },
    connect_timeout: 5,
    backoff: reconnectBackoff,
    ...(socketPath ? { path: socketPath } : {}),
  });
}

/**
 * libpq's way of naming a Unix socket, `?host=/var/run/postgresql` on the URL,
 * which postgres.js would send to the server as a setting: take it off the
 * URL and answer the socket file's path. On one machine the socket skips the
 * TCP loopback stack, which costs a synchronous write per statement here.
 */
export function socketFromUrl(url: string): { url: string; socketPath: string | null } {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host');
  if (host === null || !host.startsWith('/')) return { url, socketPath: null };
  parsed.searchParams.delete('host');
  return { url: parsed.toString(), socketPath: `${host}/.s.PGSQL.${parsed.port || '5432'}` };
}
