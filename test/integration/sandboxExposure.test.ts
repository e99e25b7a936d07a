/**
 * Who can get a token from the Sandbox page. The page hands its token to
 * whoever loads it, so it carries one only for the embedded demo (PGlite,
 * no DATABASE_URL) signed with the generated development secret (no
 * JWT_SECRET), and then the server listens on the loopback interface unless
 * HOST says otherwise. Checked in process (where the server listens) and
 * through `backscroll serve` as an operator runs it (what the page carries).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readConfig, SETTINGS } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startServer } from '../../src/server.ts';
import { backends, createScratchDatabase, openTestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/serverProcess.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'sandbox-test-secret-that-is-at-least-32-characters';
/** Safety net for a process to print what we wait for; never an assertion. */
const PROCESS_LIMIT_MS = 60_000;

const temporaryDirs: string[] = [];
const children = new Set<ChildProcess>();

async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'backscroll-sandbox-'));
  temporaryDirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
  children.clear();
});

afterAll(async () => {
  await Promise.all(temporaryDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('Where the server listens', () => {
  /** The address a server started with `env` (and nothing else set) listens on. */
  const addressUnder = async (env: Record<string, string>) => {
    const result = readConfig({ PORT: '0', ...env });
    if (!result.ok) throw new Error(result.problems.join(' '));
    const database = await openTestDatabase('pglite');
    const server = await startServer({ config: result.config, client: database.client, jwtSecret: SECRET, logger: createLogger('silent') }, 0);
    try {
      return (server.httpServer.address() as AddressInfo).address;
    } finally {
      await server.stop();
      await database.close();
    }
  };

  it('listens on 127.0.0.1 only for the embedded demo, whose Sandbox page carries a token', async () => {
    expect(await addressUnder({})).toBe('127.0.0.1');
  });

  it('listens on every interface when JWT_SECRET is set, so no token is embedded', async () => {
    expect(['::', '0.0.0.0']).toContain(await addressUnder({ JWT_SECRET: SECRET }));
  });

  it('listens where HOST says, the embedded demo included', async () => {
    expect([await addressUnder({ HOST: '0.0.0.0' }), await addressUnder({ HOST: '127.0.0.1', JWT_SECRET: SECRET })]).toEqual(['0.0.0.0', '127.0.0.1']);
  });
});

/** `backscroll serve --no-demo` with only `settings` set, on a free port: what it printed and what its Sandbox page holds. */
async function serveAndBrowse(settings: Record<string, string>) {
  const env = { ...process.env };
  for (const { name } of SETTINGS) delete env[name];
  const port = String(await freePort());
  const child = spawn(process.execPath, ['bin/backscroll.js', 'serve', '--no-demo'], {
    cwd: ROOT,
    env: { ...env, PORT: port, BACKSCROLL_DATA_DIR: await temporaryDir(), ...settings },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stdout}\n${stderr}`)), PROCESS_LIMIT_MS);
    child.stdout!.on('data', () => {
      if (stdout.includes('serving')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => reject(new Error(`serve exited:\n${stdout}\n${stderr}`)));
  });
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, { headers: { accept: 'text/html' } });
  const page = await response.text();
  child.kill('SIGTERM');
  await exited;
  const printedToken = /Authorization: Bearer (\S+)\n/.exec(stdout)?.[1] ?? null;
  return { stdout, page, printedToken };
}

/** What a Sandbox page hands out: any bearer token, or anything shaped like a JWT. */
const tokensIn = (page: string) => [...page.matchAll(/Bearer [^"\\]+|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g)].map((m) => m[0]);

describe('What the Sandbox page carries (backscroll serve)', () => {
  it('carries the printed development token for the embedded demo (no JWT_SECRET, no DATABASE_URL)', { timeout: 120_000 }, async () => {
    const { page, printedToken } = await serveAndBrowse({});
    expect(printedToken).not.toBeNull();
    expect(tokensIn(page)).toEqual([`Bearer ${printedToken}`]);
  });

  it('carries no token, and prints none, when JWT_SECRET is set', { timeout: 120_000 }, async () => {
    const { stdout, page } = await serveAndBrowse({ JWT_SECRET: SECRET });
    expect({ sandboxPage: /sandbox/i.test(page), tokensOnPage: tokensIn(page), printed: /Bearer/.test(stdout) }).toEqual({
      sandboxPage: true,
      tokensOnPage: [],
      printed: false,
    });
  });

  const onPostgres = backends.includes('postgres') ? it : it.skip;
  onPostgres('carries no token when DATABASE_URL is set, though the console gets one signed with the development secret', { timeout: 120_000 }, async () => {
    const scratch = await createScratchDatabase();
    try {
      const migrate = spawn(process.execPath, ['bin/backscroll.js', 'migrate'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: scratch.url }, stdio: 'ignore' });
      expect(await new Promise((resolve) => migrate.once('exit', resolve))).toBe(0);
      const { page, printedToken } = await serveAndBrowse({ DATABASE_URL: scratch.url });
      expect({ printed: printedToken !== null, sandboxPage: /sandbox/i.test(page), tokensOnPage: tokensIn(page) }).toEqual({
        printed: true,
        sandboxPage: true,
        tokensOnPage: [],
      });
    } finally {
      await scratch.drop();
    }
  });
});
