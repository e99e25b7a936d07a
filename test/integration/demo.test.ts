/**
 * The demo `npm start` creates on an empty embedded database, seen the way a
 * newcomer sees it: `node bin/backscroll.js serve` in a child process on a
 * fresh data folder, then the printed tokens used over HTTP. Every process a
 * test starts is killed after the test, pass or fail.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSchema, parse, validate } from 'graphql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { developmentSecret } from '../../src/auth/devSecret.ts';
import { signToken } from '../../src/auth/tokens.ts';
import { SANDBOX_DOCUMENT } from '../../src/sandboxDocument.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Safety net for a process to print what we wait for; never an assertion. */
const PROCESS_LIMIT_MS = 90_000;

const INBOX = '{ viewer { id conversations(first: 10) { edges { node { id title maxSeq lastActivityAt } } } } }';
const WALK = `query Walk($id: ID!, $after: String) { conversation(id: $id) { messages(first: 100, after: $after) {
  edges { node { seq createdAt content { __typename } } } pageInfo { hasNextPage endCursor } } } }`;
const SEARCH = 'query Search($q: String!) { search(query: $q, first: 100) { edges { node { seq } snippet { text } } } }';

/** A running `serve` and everything it printed so far. */
interface Serve {
  child: ChildProcess;
  stdout: string;
  exited: Promise<unknown>;
}

const started: Serve[] = [];
const folders: string[] = [];

/** Only what each test sets reaches the process: no DATABASE_URL, secret or port from the parent. */
function environment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'JWT_SECRET', 'NODE_ENV', 'PORT', 'BACKSCROLL_DATA_DIR', 'LOG_LEVEL']) delete env[name];
  return { ...env, LOG_LEVEL: 'warn', ...settings };
}

async function freePort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return String(port);
}

/** Starts `serve ...args` on `dataDir` and resolves with its output once it has printed the Sandbox line. */
async function serve(dataDir: string, args: string[] = []): Promise<{ url: string; stdout: string; serve: Serve }> {
  const child = spawn(process.execPath, ['bin/backscroll.js', 'serve', ...args], {
    cwd: ROOT,
    env: environment({ BACKSCROLL_DATA_DIR: dataDir, PORT: await freePort() }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const running: Serve = { child, stdout: '', exited: new Promise((resolve) => child.once('exit', resolve)) };
  started.push(running);
  child.stdout!.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${running.stdout}`)), PROCESS_LIMIT_MS);
    child.stdout!.on('data', (chunk: string) => {
      running.stdout += chunk;
      // The last line it prints, so every token line before it is whole.
      if (/in a browser for Apollo Sandbox\.\n/.test(running.stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void running.exited.then(() => reject(new Error(`serve exited before serving:\n${running.stdout}`)));
  });
  return { url: /serving (http:\/\/\S+) /.exec(running.stdout)![1]!, stdout: running.stdout, serve: running };
}

async function stop(running: Serve): Promise<void> {
  running.child.kill('SIGTERM');
  await running.exited;
}

/** The printed token of each user, by user id. */
function tokensIn(stdout: string): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const [, user, token] of stdout.matchAll(/Token for user "([^"]+)".*:\nAuthorization: Bearer (\S+)\n/g)) tokens[user!] = token!;
  return tokens;
}

async function gql(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

/** Every message of the conversation, first to last, 100 per request. */
async function walk(url: string, token: string, id: string) {
  const nodes: { seq: number; createdAt: string; content: { __typename: string } }[] = [];
  let after: string | null = null;
  for (;;) {
    const { conversation } = await gql(url, token, WALK, { id, after });
    nodes.push(...conversation.messages.edges.map((e: { node: (typeof nodes)[number] }) => e.node));
    if (!conversation.messages.pageInfo.hasNextPage) return nodes;
    after = conversation.messages.pageInfo.endCursor;
  }
}

async function dataFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'backscroll-demo-'));
  folders.push(dir);
  return dir;
}

afterEach(async () => {
  for (const running of started.splice(0)) {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
  }
});

afterAll(async () => {
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('The demo `serve` creates on an empty embedded database', () => {
  it('prints working tokens for alice and bob, who share a group of 1,000 messages (a few revoked) and a direct conversation', { timeout: 180_000 }, async () => {
    const dataDir = await dataFolder();
    const { url, stdout, serve: running } = await serve(dataDir);
    expect(stdout).toMatch(/Created a demo/);
    const tokens = tokensIn(stdout);
    expect(Object.keys(tokens)).toEqual(['alice', 'bob']);

    const alice = await gql(url, tokens.alice!, INBOX);
    const bob = await gql(url, tokens.bob!, INBOX);
    expect(alice.viewer.id).toBe('alice');
    expect(bob.viewer.id).toBe('bob');
    // Both see the same two conversations: the direct one (written last, so first in the inbox) and the group.
    expect(bob.viewer.conversations).toEqual(alice.viewer.conversations);
    const [direct, group] = alice.viewer.conversations.edges.map((e: { node: unknown }) => e.node);
    expect(group).toMatchObject({ title: '周末计划 / Weekend plans', maxSeq: 1000 });
    expect(direct).toMatchObject({ title: null, maxSeq: 5 });

    const messages = await walk(url, tokens.alice!, group.id);
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    const revoked = messages.filter((m) => m.content.__typename === 'RevokedContent').length;
    expect(revoked).toBeGreaterThan(0);
    expect(revoked).toBeLessThan(20);
    // Creation time never goes back as seq goes up, and the newest is in the past.
    const times = messages.map((m) => Date.parse(m.createdAt));
    expect(times.every((t, i) => i === 0 || t >= times[i - 1]!)).toBe(true);
    expect(times.at(-1)!).toBeLessThanOrEqual(Date.now());
    // The conversation row agrees with its newest message, as after real sends.
    expect(Date.parse(group.lastActivityAt)).toBe(times.at(-1));

    // Search finds a Chinese word, only where it occurs.
    const { search } = await gql(url, tokens.bob!, SEARCH, { q: '爬山' });
    expect(search.edges.length).toBeGreaterThan(0);
    expect(search.edges.every((e: { snippet: { text: string } }) => e.snippet.text.includes('爬山'))).toBe(true);

    // The Sandbox page is preloaded with alice's token.
    const page = await (await fetch(url, { headers: { accept: 'text/html' } })).text();
    expect(page).toContain(tokens.alice);
    await stop(running);

    // A second start on the same folder creates nothing more and prints the same users' tokens.
    const again = await serve(dataDir);
    expect(again.stdout).not.toMatch(/Created a demo/);
    const againTokens = tokensIn(again.stdout);
    expect(Object.keys(againTokens)).toEqual(['alice', 'bob']);
    expect(await gql(again.url, againTokens.alice!, INBOX)).toEqual(alice);
    await stop(again.serve);
  });

  it('with --no-demo creates nothing and prints the dev token', { timeout: 120_000 }, async () => {
    const dataDir = await dataFolder();
    const { url, stdout, serve: running } = await serve(dataDir, ['--no-demo']);
    expect(stdout).not.toMatch(/Created a demo|The demo:/);
    expect(Object.keys(tokensIn(stdout))).toEqual([]);
    const devToken = /Authorization: Bearer (\S+)\n/.exec(stdout)![1]!;
    expect(await gql(url, devToken, INBOX)).toEqual({ viewer: { id: 'dev', conversations: { edges: [] } } });
    const aliceToken = await signToken(developmentSecret(dataDir), 'alice', 600);
    expect(await gql(url, aliceToken, INBOX)).toEqual({ viewer: { id: 'alice', conversations: { edges: [] } } });
    await stop(running);
  });

  it('leaves a database that already has conversations alone', { timeout: 180_000 }, async () => {
    const dataDir = await dataFolder();
    const first = await serve(dataDir, ['--no-demo']);
    const devToken = /Authorization: Bearer (\S+)\n/.exec(first.stdout)![1]!;
    await gql(first.url, devToken, 'mutation { createConversation(input: { title: "mine", memberIds: ["bob"] }) { conversation { id } } }');
    await stop(first.serve);

    const second = await serve(dataDir);
    expect(second.stdout).not.toMatch(/Created a demo|The demo:/);
    const inbox = await gql(second.url, devToken, INBOX);
    expect(inbox.viewer.conversations.edges.map((e: { node: { title: string } }) => e.node.title)).toEqual(['mine']);
    await stop(second.serve);
  });
});

describe('The Sandbox document', () => {
  it('is valid against the schema, with the newest page, an older page, a jump, a search and a send', () => {
    const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
    const document = parse(SANDBOX_DOCUMENT);
    expect(validate(schema, document)).toEqual([]);
    const names = document.definitions.map((d) => ('name' in d ? d.name?.value : undefined));
    expect(names).toEqual(['NewestPage', 'OlderPage', 'Jump', 'Search', 'Send', 'CreateGroup']);
  });
});
