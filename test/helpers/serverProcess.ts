/**
 * The real server as a child process (`node bin/backscroll.js serve`), for
 * tests that kill, restart or signal it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Resolves once the output includes `text`; rejects if the process exits first, or after `limitMs` (a safety net). */
  waitForOutput(text: string, limitMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts `serve` with `env` on `port` and resolves once it prints its URL (fails after `limitMs`). */
export async function startServerProcess(env: Record<string, string>, port: number, limitMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['bin/backscroll.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${out}`)), limitMs);
    const check = () => {
      if (out.includes('serving')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited before serving:\n${out}`));
    });
  });
  const waitForOutput = (text: string, limitMs = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const streams = [child.stdout!, child.stderr!];
      // Registered after the listeners that collect `out`, so a chunk is in `out` when this sees it.
      const check = () => out.includes(text) && settle(null);
      const settle = (error: Error | null) => {
        clearTimeout(timer);
        for (const stream of streams) stream.off('data', check);
        if (error === null) resolve();
        else reject(error);
      };
      const timer = setTimeout(() => settle(new Error(`the server did not print "${text}" within ${limitMs} ms:\n${out}`)), limitMs);
      for (const stream of streams) stream.on('data', check);
      void exited.then(() => settle(new Error(`the server exited before printing "${text}":\n${out}`)));
      check();
    });
  return { url: `http://127.0.0.1:${port}/graphql`, child, output: () => out, waitForOutput, exited };
}
