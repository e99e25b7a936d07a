/**
 * The server under test as the benchmarks run it: `backscroll serve` in a
 * process of its own (production mode, BENCH_WORKERS workers, per-user rate
 * limits lifted because a few users send far above them), on a free port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The secret the bench server verifies tokens with; load processes sign with it. */
export const BENCH_SECRET = 'benchmark-secret-that-is-at-least-32-characters';

/** A TCP port that was free on every interface a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the server on `databaseUrl` (with `env` added, such as DATABASE_REPLICA_URLS) and resolves once it serves, with its GraphQL URL and process. */
export async function startBenchServer(databaseUrl: string, workers: number, env: Record<string, string> = {}): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  // BENCH_SERVER_NODE_ARGS (for example `--cpu-prof --cpu-prof-dir=/tmp/prof`) reaches the workers too: cluster forks with the primary's arguments.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const server = spawn(process.execPath, [...nodeArgs, 'bin/backscroll.js', 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      JWT_SECRET: BENCH_SECRET,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      BACKSCROLL_WORKERS: String(workers),
      RATE_LIMIT_SEND_PER_SECOND: '100000',
      RATE_LIMIT_SEND_BURST: '100000',
      // markRead in a group of 10 (bench/groups.ts): each member far above 10 a second.
      RATE_LIMIT_MUTATIONS_PER_SECOND: '100000',
      RATE_LIMIT_MUTATIONS_BURST: '100000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('serving') && resolve());
    server.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/graphql`, process: server };
}

/** The pids of `pid` and its children (the workers), from /proc: Linux only. */
export function serverPids(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return [pid, ...children.map(Number)];
}

/**
 * CPU time (user and system) spent so far by process `pid`, in ms, from
 * /proc (Linux only); throws when the process is gone.
 */
export function processCpuMs(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat, after the command's closing parenthesis: utime and stime in clock ticks (100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU time (user and system) spent so far by the server process `pid` and
 * its workers, in ms; NaN where /proc is not there. A cost per unit of work
 * from two readings holds on a busy box, where latencies do not.
 */
export function serverCpuMs(pid: number): number {
  try {
    return serverPids(pid).reduce((sum, one) => sum + processCpuMs(one), 0);
  } catch {
    return NaN;
  }
}
