/**
 * `GET /metrics` with BACKSCROLL_WORKERS=2: a scrape reports the totals of
 * both workers, whichever worker answers it, and answers 503 within a bound
 * (never hangs) when the other worker's metrics cannot be had.
 *
 * Which worker served a request is read from Linux's /proc: the worker whose
 * file descriptors hold the server end of that request's TCP connection. So
 * the test knows both workers served requests and both answered scrapes,
 * rather than hoping the round robin spread them. Each worker's command
 * line, from the same place, shows the V8 flags it was started with.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createScratchDatabase } from '../helpers/database.ts';
import { workersOf } from '../helpers/clusterWorkers.ts';
import { freePort, type ServerProcess, startServerProcess } from '../helpers/serverProcess.ts';

const SECRET = 'metrics-workers-secret-that-is-at-least-32-characters';
const POOL_SIZE = 3;
const READ_POOL_SIZE = 1;
/** GraphQL requests sent, each over a connection of its own. */
const REQUESTS = 40;
const SCRAPES = 10;
const PING = 'query Ping { viewer { id } }';
const COUNT = 'backscroll_graphql_request_duration_seconds_count';
const STATEMENTS_COUNT = 'backscroll_graphql_request_sql_statements_count';
/** A scrape waits at most 6 s for the primary (CLUSTER_SCRAPE_WAIT_MS), prom-client 5 s for the workers; room for a slow box. */
const SCRAPE_BOUND_MS = 9000;

/** The worker among `workers` holding the server end of the TCP connection from `clientPort` to `serverPort`, or null. */
function holderOf(serverPort: number, clientPort: number, workers: number[]): number | null {
  const port = (address: string) => parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
  let inode: string | null = null;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (port(fields[1]!) === serverPort && port(fields[2]!) === clientPort) inode = fields[9]!;
    }
  }
  if (inode === null) return null;
  for (const pid of workers) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
    } catch {
      // The worker exited, or the descriptor closed, while we looked.
    }
  }
  return null;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
  /** The worker that answered (its pid), or null when it could not be told. */
  worker: number | null;
  ms: number;
}

describe('Metrics across BACKSCROLL_WORKERS=2', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let database: DatabaseHandle;
  let server: ServerProcess;
  let port: number;
  let token: string;
  let workers: number[];
  /** GraphQL requests served, by worker. */
  const served = new Map<number, number>();

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 1 });
    await applyMigrations(database);
    port = await freePort();
    server = await startServerProcess(
      { DATABASE_URL: scratch.url, JWT_SECRET: SECRET, NODE_ENV: 'production', LOG_LEVEL: 'silent', BACKSCROLL_WORKERS: '2', DATABASE_POOL_SIZE: String(POOL_SIZE), DATABASE_READ_POOL_SIZE: String(READ_POOL_SIZE) },
      port,
      90_000,
    );
    workers = workersOf(server.child.pid!);
    token = await signToken(SECRET, 'alice', 3600);
  }, 120_000);
  afterAll(async () => {
    if (server) {
      server.child.kill('SIGCONT');
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await database?.close();
    await scratch?.drop();
  });

  /**
   * One HTTP request over `agent` (a fresh connection unless the agent keeps
   * one open), and the worker that answered it, looked up while the
   * connection is still open.
   */
  const call = (agent: Agent, method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const started = performance.now();
      const req = request({ host: '127.0.0.1', port, method, path, agent, headers, timeout: 30_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            contentType: String(res.headers['content-type']),
            body: text,
            worker: holderOf(port, req.socket!.localPort!, workers),
            ms: performance.now() - started,
          }),
        );
      });
      req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${path} in 30 s`)));
      req.on('error', reject);
      req.end(body);
    });
  /** `call` over a connection of its own, closed after. */
  const once = async (method: string, path: string, body?: string, headers?: Record<string, string>) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      return await call(agent, method, path, body, headers);
    } finally {
      agent.destroy();
    }
  };
  const scrape = () => once('GET', '/metrics');
  /** The samples of one exposition text by series; throws on a series written twice. */
  const samples = (text: string) => {
    const found = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const at = line.lastIndexOf(' ');
      const series = line.slice(0, at);
      if (found.has(series)) throw new Error(`A series twice: ${series}`);
      found.set(series, Number(line.slice(at + 1)));
    }
    return found;
  };
  /** Requests counted in a scrape, over every operation. */
  const requestsIn = (found: Map<string, number>) => [...found].filter(([series]) => series.startsWith(`${COUNT}{`)).reduce((sum, [, n]) => sum + n, 0);

  it('starts both workers with V8\'s memory reducer off, so a quiet minute does not drop their compiled code (src/workerFlags.ts)', () => {
    expect(workers).toHaveLength(2);
    for (const pid of workers) expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('--no-memory-reducer');
  });

  it('counts every request of both workers in every scrape, whichever worker answers it', { timeout: 60_000 }, async () => {
    expect(workers).toHaveLength(2);
    for (let i = 0; i < REQUESTS; i++) {
      const answer = await once('POST', '/graphql', JSON.stringify({ query: PING }), {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
      });
      expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { data: { viewer: { id: 'alice' } } }]);
      expect(workers).toContain(answer.worker);
      served.set(answer.worker!, (served.get(answer.worker!) ?? 0) + 1);
    }
    // Both workers served some: a worker reporting only its own would be short of REQUESTS.
    expect(served.size).toBe(2);

    const answeredBy = new Set<number | null>();
    for (let i = 0; i < SCRAPES; i++) {
      const answer = await scrape();
      expect(answer.status).toBe(200);
      expect(answer.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
      answeredBy.add(answer.worker);
      const found = samples(answer.body);
      expect({
        worker: answer.worker,
        requests: requestsIn(found),
        pings: found.get(`${COUNT}{operation="Ping"}`),
        statementObservations: found.get(`${STATEMENTS_COUNT}{operation="Ping"}`),
        // Gauges summed over the workers: a pool each.
        poolSize: found.get('backscroll_db_pool_size'),
      }).toEqual({ worker: answer.worker, requests: REQUESTS, pings: REQUESTS, statementObservations: REQUESTS, poolSize: 2 * (POOL_SIZE + READ_POOL_SIZE) });
    }
    // Both workers answered scrapes, and each answered with both workers' totals.
    expect([...answeredBy].sort()).toEqual([...workers].sort());
  });

  /** An agent holding an open connection to `worker` (the round robin hands fresh connections to each worker in turn). */
  const connectionTo = async (worker: number) => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      if ((await call(agent, 'GET', '/healthz')).worker === worker) return agent;
      agent.destroy();
    }
    throw new Error(`no connection reached worker ${worker}`);
  };
  /** A scrape over `agent`'s open connection while `stopped` is stopped (SIGSTOP), which must answer 503 within the bound. */
  const scrapeWhileStopped = async (agent: Agent, stopped: number) => {
    process.kill(stopped, 'SIGSTOP');
    try {
      return await call(agent, 'GET', '/metrics');
    } finally {
      process.kill(stopped, 'SIGCONT');
      agent.destroy();
    }
  };
  const expect503 = (answer: Answer) =>
    expect({ status: answer.status, contentType: answer.contentType, body: answer.body }).toEqual({
      status: 503,
      contentType: 'text/plain; charset=utf-8',
      body: expect.stringMatching(/^The metrics of every worker could not be collected: .+\n$/),
    });

  it('answers 503 in bounded time when the other worker does not answer, then totals again', { timeout: 60_000 }, async () => {
    const [asked, stopped] = workers as [number, number];
    // prom-client gives up on the stopped worker after its 5 s.
    const answer = await scrapeWhileStopped(await connectionTo(asked), stopped);
    expect(answer.worker).toBe(asked);
    expect503(answer);
    expect(answer.ms).toBeGreaterThan(4900);
    expect(answer.ms).toBeLessThan(SCRAPE_BOUND_MS);
    // The stopped worker's late answer to the abandoned scrape changes nothing.
    const again = await scrape();
    expect([again.status, requestsIn(samples(again.body))]).toEqual([200, REQUESTS]);
  });

  it('answers 503 in bounded time when the primary does not answer, then totals again', { timeout: 60_000 }, async () => {
    // The connection first: a stopped primary hands out no new ones. The worker gives up after its 6 s.
    const answer = await scrapeWhileStopped(await connectionTo(workers[0]!), server.child.pid!);
    expect(answer.worker).toBe(workers[0]);
    expect503(answer);
    expect(answer.ms).toBeGreaterThan(5900);
    expect(answer.ms).toBeLessThan(SCRAPE_BOUND_MS);
    const again = await scrape();
    expect([again.status, requestsIn(samples(again.body))]).toEqual([200, REQUESTS]);
  });

  it('never hangs when a worker dies: 503 or the survivor\u2019s totals, then the survivor\u2019s totals', { timeout: 90_000 }, async () => {
    const [dead, survivor] = workers as [number, number];
    process.kill(dead, 'SIGKILL');
    // Until the primary has seen the death, node:cluster may still hand a new connection to the dead worker,
    // where it is lost (any request, not only scrapes): scrape once the primary says it is starting another.
    await server.waitForOutput(`worker ${dead} exited (SIGKILL)`);
    const outcomes: string[] = [];
    const until = performance.now() + 60_000;
    let settled = 0;
    // The primary forks a replacement at once; it joins the scrapes once it has started (a few seconds).
    while (settled < 3 && performance.now() < until) {
      const answer = await scrape();
      expect(answer.ms).toBeLessThan(SCRAPE_BOUND_MS);
      if (answer.status === 503) {
        expect503(answer);
        outcomes.push('503');
        settled = 0;
        continue;
      }
      expect(answer.status).toBe(200);
      // The dead worker's counts died with it; the replacement has served nothing yet.
      expect(requestsIn(samples(answer.body))).toBe(served.get(survivor));
      outcomes.push('200');
      settled += 1;
    }
    expect(outcomes.slice(-3)).toEqual(['200', '200', '200']);
  });
});
