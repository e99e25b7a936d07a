/**
 * The server under test as the benchmarks run it: `backscroll serve` in a
 * process of its own (production mode, BENCH_WORKERS workers, per-user rate
 * limits lifted because a few users send far above them), on a free port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
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
  const server = spawn(process.execPath, ['bin/backscroll.js', 'serve'], {
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
