/**
 * The `backscroll` command as an operator runs it: `node bin/backscroll.js`
 * in a child process, with only the environment each test gives it. Every
 * process a test starts is killed after the test, pass or fail; time limits
 * here are safety nets against a hung process, never assertions.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jwtVerify } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { SETTINGS } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { migrationStatus } from '../../src/db/migrate.ts';
import { backends, createScratchDatabase } from '../helpers/database.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'cli-test-secret-that-is-at-least-32-characters';
/** Safety net for one process to print what we wait for, or to exit. */
const PROCESS_LIMIT_MS = 60_000;

const TYPENAME = '{ __typename }';
const VIEWER = '{ viewer { id } }';
const INTROSPECTION = '{ __schema { queryType { name } } }';
const CREATE_GROUP = 'mutation { createConversation(input: { title: "cli", memberIds: ["bob"] }) { conversation { id maxSeq } } }';
const SEND = `mutation Send($id: ID!) {
  sendMessage(input: { conversationId: $id, clientMsgId: "cli-1", text: "hello from the cli test" }) { message { seq } }
}`;
const CONVERSATION = 'query Conversation($id: ID!) { conversation(id: $id) { maxSeq messages(last: 5) { edges { node { seq } } } } }';

/** The parent environment without any setting (they must not leak into the command: each test says what it sets), plus `settings`. */
function environment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const { name } of SETTINGS) delete env[name];
  return { ...env, ...settings };
}

/** A running (or finished) `backscroll` process and everything it printed so far. */
interface Cli {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<Cli>();
const temporaryDirs: string[] = [];

function spawnCli(args: string[], settings: Record<string, string>): Cli {
  const child = spawn(process.execPath, ['bin/backscroll.js', ...args], {
    cwd: ROOT,
    env: environment(settings),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const cli: Cli = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (cli.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (cli.stderr += chunk));
  started.add(cli);
  return cli;
}

const isRunning = (cli: Cli) => cli.child.exitCode === null && cli.child.signalCode === null;
const describeOutput = (cli: Cli) => `stdout:\n${cli.stdout}\nstderr:\n${cli.stderr}`;

/** Waits for the process to exit by itself; kills it (and fails) if it outlives the safety net. */
async function exitOf(cli: Cli): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      cli.child.kill('SIGKILL');
      reject(new Error(`backscroll ${cli.child.spawnargs.slice(2).join(' ')} did not exit.\n${describeOutput(cli)}`));
    }, PROCESS_LIMIT_MS);
  });
  try {
    const { code, signal } = await Promise.race([cli.exited, hung]);
    // 'exit' can come before the pipes are drained.
    await Promise.all([cli.child.stdout, cli.child.stderr].map((s) => (s && !s.closed ? new Promise((r) => s.once('close', r)) : null)));
    return { code, signal, stdout: cli.stdout, stderr: cli.stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `backscroll ...args` to completion. */
function runCli(args: string[], settings: Record<string, string>) {
  return exitOf(spawnCli(args, settings));
}

/** Resolves with the match once stdout matches `pattern`; rejects if the process exits first. */
function waitForOutput(cli: Cli, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(cli.stdout);
      if (match === null) return;
      done();
      resolve(match);
    };
    const exited = () => {
      done();
      reject(new Error(`backscroll exited before printing ${pattern}.\n${describeOutput(cli)}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`backscroll did not print ${pattern}.\n${describeOutput(cli)}`));
    }, PROCESS_LIMIT_MS);
    const done = () => {
      clearTimeout(timer);
      cli.child.stdout!.off('data', check);
      cli.child.off('exit', exited);
    };
    // Registered after spawnCli's own listener, so `cli.stdout` already holds the chunk.
    cli.child.stdout!.on('data', check);
    cli.child.once('exit', exited);
    check();
  });
}

/** Starts `backscroll serve`; resolves with its printed URL (and dev token, unless in production). */
async function startServe(settings: Record<string, string>, { production = false } = {}) {
  // Without the demo (test/integration/demo.test.ts covers it), the dev token is the one printed.
  const cli = spawnCli(['serve', '--no-demo'], settings);
  // Whole lines only, so a token split across two chunks is never read half.
  const pattern = production ? /serving (http:\/\/\S+) / : /serving (http:\/\/\S+) [\s\S]*Authorization: Bearer (\S+)\n/;
  const [, url, devToken] = await waitForOutput(cli, pattern);
  return { cli, url: url!, devToken: devToken ?? null };
}

/** Stops a server the way a process manager does, and answers its exit. */
async function stop(cli: Cli) {
  cli.child.kill('SIGTERM');
  return exitOf(cli);
}

/** A port nothing listens on right now (the server prints its URL, so PORT=0 would not tell us which). */
async function freePort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return String(port);
}

async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'backscroll-cli-'));
  temporaryDirs.push(dir);
  return dir;
}

/** Posts a GraphQL operation to `url`, with `token` if given. */
async function gql(url: string, query: string, { token, variables }: { token?: string; variables?: Record<string, unknown> } = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: { extensions?: { code?: string } }[] };
  return { status: response.status, data: body.data, codes: (body.errors ?? []).map((e) => e.extensions?.code) };
}

/** What a browser gets when it opens the endpoint. */
async function browse(url: string) {
  const response = await fetch(url, { headers: { accept: 'text/html' } });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}

afterEach(async () => {
  for (const cli of started) {
    if (isRunning(cli)) {
      cli.child.kill('SIGKILL');
      await cli.exited;
    }
  }
  started.clear();
});

afterAll(async () => {
  await Promise.all(temporaryDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('The backscroll command', () => {
  describe('token', () => {
    it('prints a JWT for the user, signed with JWT_SECRET, with an expiry', async () => {
      const result = await runCli(['token', 'alice'], { JWT_SECRET: SECRET, BACKSCROLL_DATA_DIR: await temporaryDir() });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const token = result.stdout.trim();
      const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(SECRET), { algorithms: ['HS256'] });
      expect(protectedHeader.alg).toBe('HS256');
      expect(payload.sub).toBe('alice');
      expect(typeof payload.exp).toBe('number');
      expect(payload.exp!).toBeGreaterThan(payload.iat!);
      await expect(jwtVerify(token, new TextEncoder().encode(`${SECRET}-but-another`))).rejects.toMatchObject({
        code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      });
    });

    it('honours --ttl', async () => {
      const result = await runCli(['token', 'alice', '--ttl', '60'], { JWT_SECRET: SECRET, BACKSCROLL_DATA_DIR: await temporaryDir() });
      expect(result.code).toBe(0);
      const { payload } = await jwtVerify(result.stdout.trim(), new TextEncoder().encode(SECRET));
      // exp is computed a moment after iat, so it may land on the next second.
      expect([60, 61]).toContain(payload.exp! - payload.iat!);
    });

    it('adds the admin role with --admin, and refuses an unknown flag', async () => {
      const settings = { JWT_SECRET: SECRET, BACKSCROLL_DATA_DIR: await temporaryDir() };
      const admin = await runCli(['token', 'ops', '--admin'], settings);
      expect(admin.code).toBe(0);
      const { payload } = await jwtVerify(admin.stdout.trim(), new TextEncoder().encode(SECRET));
      expect(payload).toMatchObject({ sub: 'ops', roles: ['admin'] });
      const plain = await jwtVerify((await runCli(['token', 'alice'], settings)).stdout.trim(), new TextEncoder().encode(SECRET));
      expect(plain.payload.roles).toBeUndefined();
      const unknown = await runCli(['token', 'alice', '--root'], settings);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toMatch(/usage/i);
    });

    it('without a user id exits non-zero and prints the usage', async () => {
      const result = await runCli(['token'], { JWT_SECRET: SECRET, BACKSCROLL_DATA_DIR: await temporaryDir() });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/usage/i);
    });
  });

  it('prints the usage with every setting, its default and meaning for --help, and exits 0', async () => {
    const result = await runCli(['--help'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: backscroll/);
    const table = result.stdout.slice(result.stdout.indexOf('\nSettings')).trim().split('\n').slice(1);
    expect(table.map((line) => line.trim().split(/ {2,}/))).toEqual(SETTINGS.map((s) => [s.name, s.default ?? 'unset', s.meaning]));
  });

  it('refuses an unknown command with a non-zero exit and the usage', async () => {
    const result = await runCli(['frobnicate'], { BACKSCROLL_DATA_DIR: await temporaryDir() });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/usage/i);
  });

  it('refuses to serve in production without JWT_SECRET', async () => {
    const result = await runCli(['serve'], { NODE_ENV: 'production', PORT: await freePort(), BACKSCROLL_DATA_DIR: await temporaryDir() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('JWT_SECRET');
    expect(result.stdout).not.toContain('serving');
  });

  it(
    'serves on PGlite with nothing set up: migrates itself, prints the URL and a dev token, and keeps its data across restarts',
    { timeout: 180_000 },
    async () => {
      const dataDir = await temporaryDir();
      const port = await freePort();
      const settings = { PORT: port, BACKSCROLL_DATA_DIR: dataDir };
      const { cli, url, devToken } = await startServe(settings);
      expect(url).toBe(`http://localhost:${port}/graphql`);
      expect(devToken).not.toBeNull();

      // Anyone may ask for __typename (a health probe); everything else needs the token.
      expect(await gql(url, TYPENAME)).toEqual({ status: 200, data: { __typename: 'Query' }, codes: [] });
      expect((await gql(url, VIEWER)).codes).toEqual(['UNAUTHENTICATED']);
      expect(await gql(url, VIEWER, { token: devToken! })).toEqual({ status: 200, data: { viewer: { id: 'dev' } }, codes: [] });

      // The tables exist: the migrations ran at start.
      const created = await gql(url, CREATE_GROUP, { token: devToken! });
      expect(created.codes).toEqual([]);
      const conversationId = created.data.createConversation.conversation.id as string;
      const sent = await gql(url, SEND, { token: devToken!, variables: { id: conversationId } });
      expect(sent).toEqual({ status: 200, data: { sendMessage: { message: { seq: 1 } } }, codes: [] });

      // `token` without JWT_SECRET signs with the same per-data-folder secret the server uses.
      const token = await runCli(['token', 'alice'], settings);
      expect(token.code).toBe(0);
      expect(await gql(url, VIEWER, { token: token.stdout.trim() })).toMatchObject({ data: { viewer: { id: 'alice' } } });

      // In development the endpoint opens Apollo Sandbox in a browser.
      const page = await browse(url);
      expect(page.status).toBe(200);
      expect(page.contentType).toMatch(/text\/html/);
      expect(page.body).toMatch(/sandbox/i);

      await stop(cli);

      // The migrations are recorded in the data folder, all of them.
      const database = await openDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pglite') });
      try {
        const status = await migrationStatus(database);
        expect(status).toEqual({ applied: status.shipped, shipped: status.shipped, behind: false, pending: [] });
        expect(status.shipped).toBeGreaterThan(0);
      } finally {
        await database.close();
      }

      // Started again on the same folder: same data, and the old dev token still works.
      const again = await startServe({ ...settings, PORT: await freePort() });
      const read = await gql(again.url, CONVERSATION, { token: devToken!, variables: { id: conversationId } });
      expect(read).toEqual({
        status: 200,
        data: { conversation: { maxSeq: 1, messages: { edges: [{ node: { seq: 1 } }] } } },
        codes: [],
      });
      await stop(again.cli);
    },
  );

  it('shuts down on SIGTERM by closing the server and the database, and exits 0', { timeout: 180_000 }, async () => {
    const dataDir = await temporaryDir();
    const { cli } = await startServe({ PORT: await freePort(), BACKSCROLL_DATA_DIR: dataDir });
    expect(await stop(cli)).toMatchObject({ code: 0, signal: null });
    expect(cli.stdout).toContain('shutting down');
    // PGlite removes its postmaster.pid when it is closed; a process killed before closing it leaves the file.
    expect(existsSync(join(dataDir, 'pglite', 'postmaster.pid'))).toBe(false);
  });
});

// Only when DATABASE_URL names a server to make scratch databases on (CI always sets it),
// the same way the other files add their PostgreSQL runs.
const describeOnPostgres = backends.includes('postgres') ? describe : () => undefined;

describeOnPostgres('The backscroll command on PostgreSQL', () => {
  const scratches: { url: string; drop(): Promise<void> }[] = [];
  const scratchDatabase = async () => {
    const scratch = await createScratchDatabase();
    scratches.push(scratch);
    return scratch;
  };

  afterAll(async () => {
    // Servers are stopped by afterEach; drop force-closes anything left.
    await Promise.all(scratches.map((s) => s.drop()));
  });

  it('refuses to serve a database behind the migrations, saying to run migrate; migrate brings it up to date; then serve starts', { timeout: 180_000 }, async () => {
    const scratch = await scratchDatabase();
    const settings = { DATABASE_URL: scratch.url, BACKSCROLL_DATA_DIR: await temporaryDir() };

    const refused = await runCli(['serve'], { ...settings, PORT: await freePort() });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/migrate/);
    expect(refused.stdout).not.toContain('serving');

    const migrated = await runCli(['migrate'], settings);
    expect(migrated.code).toBe(0);
    // Progress: where the database stood before, each migration as it is applied (the slow ones say so), and after.
    expect(migrated.stdout).toMatch(/^migrations: 0 of \d+ applied/);
    expect(migrated.stdout).toContain('migrations: applying 0000_init\n');
    expect(migrated.stdout).toMatch(/migrations: applying 0004_keyed_search \(rewrites every stored search vector/);
    expect(migrated.stdout).toMatch(/the database is up to date\.\n$/);
    const database = await openDatabase({ kind: 'postgres', url: scratch.url, poolSize: 1 });
    try {
      const status = await migrationStatus(database);
      expect(status).toEqual({ applied: status.shipped, shipped: status.shipped, behind: false, pending: [] });
      // Running it again is harmless.
      expect((await runCli(['migrate'], settings)).code).toBe(0);
      expect(await migrationStatus(database)).toEqual(status);
    } finally {
      await database.close();
    }

    const { cli, url, devToken } = await startServe({ ...settings, PORT: await freePort() });
    expect(await gql(url, TYPENAME)).toEqual({ status: 200, data: { __typename: 'Query' }, codes: [] });
    expect(await gql(url, VIEWER, { token: devToken! })).toEqual({ status: 200, data: { viewer: { id: 'dev' } }, codes: [] });
    const created = await gql(url, CREATE_GROUP, { token: devToken! });
    expect(created.codes).toEqual([]);
    await stop(cli);
  });

  it('runs several worker processes on one port with BACKSCROLL_WORKERS, and stops them all on SIGTERM', { timeout: 180_000 }, async () => {
    const scratch = await scratchDatabase();
    const settings = { DATABASE_URL: scratch.url, BACKSCROLL_DATA_DIR: await temporaryDir() };
    expect((await runCli(['migrate'], settings)).code).toBe(0);
    const production = { ...settings, NODE_ENV: 'production', JWT_SECRET: SECRET, BACKSCROLL_WORKERS: '2', PORT: await freePort() };
    const { cli, url } = await startServe(production, { production: true });
    expect(cli.stdout).toMatch(/2 worker processes/);
    const token = await signToken(SECRET, 'alice', 600);
    for (let i = 0; i < 4; i++) {
      expect(await gql(url, VIEWER, { token })).toEqual({ status: 200, data: { viewer: { id: 'alice' } }, codes: [] });
    }
    expect(await stop(cli)).toMatchObject({ code: 0, signal: null });
  });

  it('in production, turns introspection and the Sandbox page off and prints no dev token', { timeout: 180_000 }, async () => {
    const scratch = await scratchDatabase();
    const settings = { DATABASE_URL: scratch.url, BACKSCROLL_DATA_DIR: await temporaryDir() };
    expect((await runCli(['migrate'], settings)).code).toBe(0);

    const production = { ...settings, NODE_ENV: 'production', JWT_SECRET: SECRET, PORT: await freePort() };
    const { cli, url } = await startServe(production, { production: true });
    expect(cli.stdout).not.toMatch(/Bearer/);
    const token = await signToken(SECRET, 'alice', 600);

    // Health probes and real clients still work.
    expect(await gql(url, TYPENAME)).toEqual({ status: 200, data: { __typename: 'Query' }, codes: [] });
    expect(await gql(url, VIEWER, { token })).toEqual({ status: 200, data: { viewer: { id: 'alice' } }, codes: [] });

    // Introspection is refused, anonymous or not.
    for (const headers of [{}, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: INTROSPECTION }),
      });
      const body = (await response.json()) as { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] };
      expect(body.data).toBeUndefined();
      expect(body.errors?.map((e) => e.extensions)).toEqual([
        { code: 'GRAPHQL_VALIDATION_FAILED', validationErrorCode: 'INTROSPECTION_DISABLED' },
      ]);
    }

    // A browser gets no Sandbox page.
    const page = await browse(url);
    expect(page.contentType).not.toMatch(/text\/html/);
    expect(page.body).not.toMatch(/sandbox/i);
    await stop(cli);
  });
});
