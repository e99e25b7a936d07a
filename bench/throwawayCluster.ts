/**
 * A PostgreSQL 15 cluster of its own, in a temp folder on a free port, for
 * tests that stop and start the database and for bench rows that need a
 * primary and its replica (bench/replicas.ts). The shared server on 5432 is
 * used by every other test file at the same time and is never touched.
 *
 * initdb and postgres refuse to run as root, so when the tests run as root
 * (CI here) the cluster belongs to the `postgres` system user and its
 * commands run through `runuser`.
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './benchServer.ts';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;

export interface ThrowawayCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Its temp folder: data/ (the data directory), log, the socket. */
  folder: string;
  /** Fast shutdown: open connections are terminated, as in an outage. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster if it runs and deletes its folder. */
  destroy(): Promise<void>;
}

/** Runs one of PostgreSQL 15's programs (initdb, pg_ctl, pg_basebackup), as `postgres` when the tests run as root. */
export async function pg(command: string, args: string[]): Promise<void> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, command), ...args]] : [join(BIN, command), args];
  await run(file, argv, { timeout: 60_000 });
}

/** A new temp folder for a cluster, owned by whoever runs its programs. */
export async function clusterFolder(): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'backscroll-pg-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const uid = Number(stdout.trim());
    chownSync(folder, uid, uid);
  }
  return folder;
}

/** Starts the cluster in `folder`/data on `port` and answers its controls. */
export async function startCluster(folder: string, port: number): Promise<ThrowawayCluster> {
  const dataDir = join(folder, 'data');
  // Socket in the cluster's own folder: the system socket folder is the shared server's.
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => pg('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(folder, 'log'), '-w', 'start']);
  const stop = () => pg('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  await start();
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    folder,
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async destroy() {
      if (running) await stop().catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Creates and starts a cluster with trust authentication for `postgres`.
 * initdb's defaults make it a primary a replica can stream from
 * (wal_level replica, max_wal_senders 10, replication allowed from
 * 127.0.0.1 in pg_hba.conf): see streamingReplica.ts.
 */
export async function createThrowawayCluster(): Promise<ThrowawayCluster> {
  const folder = await clusterFolder();
  const port = await freePort();
  await pg('initdb', ['-D', join(folder, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  return startCluster(folder, port);
}
