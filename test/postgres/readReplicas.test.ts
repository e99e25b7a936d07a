/**
 * Read replicas against a real streaming replica of a throwaway PostgreSQL 15
 * cluster (the shared server is never touched): reads with a consistency
 * token always see the writes it came from, even while the replica replays
 * late; reads without one do go to the replica (so the token is what keeps
 * them fresh); a stopped replica leaves rotation without failing a read, and
 * comes back once it returns; so does a replica that hangs (SIGSTOP: its
 * connections stay open and nothing answers), without holding any read
 * longer than the replica read timeout.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signToken } from '../../src/auth/tokens.ts';
import { readConfig } from '../../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { openReplicaSet, type ReplicaSet } from '../../src/db/replicaSet.ts';
import { parseWalPosition } from '../../src/history/walPosition.ts';
import { createLogger } from '../../src/log.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import { liveClient } from '../helpers/liveClient.ts';
import { createStreamingReplica, type StreamingReplica } from '../../bench/streamingReplica.ts';
import { createThrowawayCluster, type ThrowawayCluster } from '../../bench/throwawayCluster.ts';

const SECRET = 'read-replicas-test-secret-at-least-32-characters';
const STATEMENT_TIMEOUT_MS = 2000;
/** Short, so 1,000 token reads that always fall back to the primary take seconds, not a minute. */
const MAX_WAIT_MS = 20;
/** Far longer than the wait: while it applies, no token read can be served by the replica. */
const APPLY_DELAY_MS = 200;
const TRIES = 1000;
/** Clients sending and reading at once. */
const CLIENTS = 8;
/** How long a read waits for a replica before it is retried on the primary (REPLICA_READ_TIMEOUT_MS; 2,000 by default). */
const READ_TIMEOUT_MS = 1000;
/**
 * The longest any read may take while the replica hangs: the read timeout,
 * the retry on the primary and the HTTP round trip on a busy two-core box
 * (outage.test.ts saw 500 ms of that). Without the read timeout a read sent
 * to the hung replica waited for the statement timeout plus 1 s (3,000 ms).
 */
const HUNG_READ_BOUND_MS = READ_TIMEOUT_MS + 1500;
/** The issue's promise: reads that start this long after a replica fails find it out of rotation. */
const OUT_OF_ROTATION_WITHIN_MS = 5000;
/** A read that starts once the hung replica is out of rotation reads the primary at once. */
const PROMPT_READ_MS = 1500;
/** How long the replica stays hung: past OUT_OF_ROTATION_WITHIN_MS, with reads after it. */
const HANG_MS = OUT_OF_ROTATION_WITHIN_MS + 1500;

const SEND = `mutation ($c: ID!, $k: String!) { sendMessage(input: { conversationId: $c, clientMsgId: $k, text: $k }) { message { seq } } }`;
const NEWEST_PAGE = `query ($c: ID!) { conversation(id: $c) { messages(last: 5) { edges { node { seq } } } } }`;

const execFileAsync = promisify(execFile);

/**
 * Stops (SIGSTOP) the postmaster of `cluster` and then each of its children,
 * as a frozen host or a network black hole looks to a client: connections
 * stay open, new ones are accepted by the kernel, and nothing answers. Each
 * pid goes into `stopped` as it stops, so a failure halfway wakes them all.
 */
async function hang(cluster: ThrowawayCluster, stopped: number[]): Promise<void> {
  const postmaster = Number(readFileSync(join(cluster.folder, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  // The postmaster first: stopped, it forks no child that the list below would miss.
  process.kill(postmaster, 'SIGSTOP');
  stopped.push(postmaster);
  const { stdout } = await execFileAsync('pgrep', ['-P', String(postmaster)]);
  for (const pid of stdout.trim().split('\n').map(Number)) {
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
  }
}

/** Lets `pids` run again (SIGCONT), children first; a pid that has gone is skipped. */
function wake(pids: number[]): void {
  for (const pid of [...pids].reverse()) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone: nothing to wake.
    }
  }
}

interface Answer {
  status: number;
  token: string | null;
  body: { data?: any; errors?: { extensions?: { code?: string } }[]; extensions?: { consistency?: string } };
}

describe('Read replicas', () => {
  let primary: ThrowawayCluster;
  let replica: StreamingReplica;
  let database: DatabaseHandle;
  let replicas: ReplicaSet;
  let server: RunningServer;
  let token: string;
  let conversationId: string;
  /** The replica's stopped processes, woken in afterAll whatever happened. */
  const hung: number[] = [];
  /** Each time the replica left or returned to rotation. */
  const changes: { state: string; at: number }[] = [];

  beforeAll(async () => {
    primary = await createThrowawayCluster();
    database = await openDatabase({ kind: 'postgres', url: primary.url, poolSize: 8, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    await applyMigrations(database);
    // A copy of the migrated primary, so it holds the schema from its first moment.
    replica = await createStreamingReplica(primary);
    replicas = await openReplicaSet([replica.url], database.client, {
      maxWaitMs: MAX_WAIT_MS,
      maxLagMs: 1000,
      poolSize: 8,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      readTimeoutMs: READ_TIMEOUT_MS,
      onChange: (report) => changes.push({ state: report.state, at: Date.now() }),
    });
    const result = readConfig({
      JWT_SECRET: SECRET,
      NODE_ENV: 'production',
      STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      RATE_LIMIT_SEND_PER_SECOND: '100000',
      RATE_LIMIT_SEND_BURST: '100000',
      RATE_LIMIT_MUTATIONS_PER_SECOND: '100000',
      RATE_LIMIT_MUTATIONS_BURST: '100000',
    });
    if (!result.ok) throw new Error(result.problems.join(' '));
    server = await startServer({ config: result.config, client: database.client, replicas, jwtSecret: SECRET, logger: createLogger('silent') }, 0);
    token = await signToken(SECRET, 'alice', 3600);
    const created = await gql('mutation { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }', {});
    conversationId = created.body.data.createConversation.conversation.id;
    await vi.waitFor(() => expect(replicas.report()[0]!.state).toBe('in rotation'), { timeout: 20_000, interval: 100 });
  }, 120_000);
  afterAll(async () => {
    // First: a stopped cluster would hold pg_ctl stop, and the pools' ends, for ever.
    wake(hung.splice(0));
    await server?.stop();
    await replicas?.close();
    await database?.close();
    await replica?.destroy();
    await primary?.destroy();
  });

  const gql = async (query: string, variables: Record<string, unknown>, consistency?: string): Promise<Answer> => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        ...(consistency === undefined ? {} : { 'backscroll-consistency': consistency }),
      },
      body: JSON.stringify({ query, variables }),
      // A read the server never answers fails the test here instead of hanging it.
      signal: AbortSignal.timeout(20_000),
    });
    return { status: response.status, token: response.headers.get('backscroll-consistency'), body: (await response.json()) as Answer['body'] };
  };
  /** Waits (up to 30 s) until a page read succeeds and the replica has served a read since the call. */
  const untilReplicaServes = async () => {
    const before = replicas.reads().replicas[0]!;
    await vi.waitFor(
      async () => {
        const read = await gql(NEWEST_PAGE, { c: conversationId });
        expect(read.body.errors).toBeUndefined();
        expect(replicas.reads().replicas[0]).toBeGreaterThan(before);
      },
      { timeout: 30_000, interval: 100 },
    );
  };
  const seqsOf = (answer: Answer): number[] => answer.body.data.conversation.messages.edges.map((e: { node: { seq: number } }) => e.node.seq);
  let sent = 0;
  /** Sends to `into` (the shared conversation unless given) and answers the seq and the response's token. */
  const send = async (into = conversationId) => {
    const answer = await gql(SEND, { c: into, k: `m${sent++}` });
    expect(answer.body.errors).toBeUndefined();
    return { seq: answer.body.data.sendMessage.message.seq as number, token: answer.token! };
  };
  const readyz = async () => (await (await fetch(server.url.replace('/graphql', '/readyz'))).json()) as { status: string; replicas: { state: string }[] };

  it('answers every request with its token, in the header and in extensions, and a read with it from the replica once caught up', async () => {
    const write = await send();
    expect(parseWalPosition(write.token)).not.toBe(null);
    await vi.waitFor(() => expect(replicas.report()[0]!.replayed && parseWalPosition(replicas.report()[0]!.replayed!)! >= parseWalPosition(write.token)!).toBe(true), {
      timeout: 10_000,
    });
    const before = replicas.reads().replicas[0]!;
    const read = await gql(NEWEST_PAGE, { c: conversationId }, write.token);
    expect(seqsOf(read)).toContain(write.seq);
    expect(read.body.extensions?.consistency).toBe(read.token);
    // Never earlier than the token it was given.
    expect(parseWalPosition(read.token!)! >= parseWalPosition(write.token)!).toBe(true);
    expect(replicas.reads().replicas[0]).toBe(before + 1);
  });

  it('refuses a malformed token with BAD_USER_INPUT before reading anything', async () => {
    const before = replicas.reads();
    const answer = await gql(NEWEST_PAGE, { c: conversationId }, 'not-a-position');
    expect([answer.status, answer.body.errors?.[0]?.extensions?.code, answer.body.data]).toEqual([400, 'BAD_USER_INPUT', undefined]);
    expect(replicas.reads()).toEqual(before);
  });

  it(`always shows a send to a page read with its token, ${TRIES} times, while the replica replays ${APPLY_DELAY_MS} ms late; without the token the replica serves stale pages`, { timeout: 90_000 }, async () => {
    await replica.setApplyDelay(APPLY_DELAY_MS);
    // The delay is in force once a send is visibly late on the replica.
    await vi.waitFor(
      async () => {
        const write = await send();
        const started = replicas.reads().replicas[0]!;
        const stale = await gql(NEWEST_PAGE, { c: conversationId });
        expect(replicas.reads().replicas[0]).toBe(started + 1);
        expect(seqsOf(stale)).not.toContain(write.seq);
      },
      { timeout: 20_000, interval: 50 },
    );

    // A conversation per client, so no other client's sends push its own off the newest page.
    const own = await Promise.all(
      Array.from({ length: CLIENTS }, async () => (await gql('mutation { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }', {})).body.data.createConversation.conversation.id as string),
    );
    const missing: number[] = [];
    let next = 0;
    const client = async (into: string) => {
      while (next < TRIES) {
        next += 1;
        const write = await send(into);
        const read = await gql(NEWEST_PAGE, { c: into }, write.token);
        if (!seqsOf(read).includes(write.seq)) missing.push(write.seq);
      }
    };
    const started = Date.now();
    await Promise.all(own.map(client));
    const tokenReadsMs = Date.now() - started;
    expect(missing).toEqual([]);

    // The same without the token: the replica serves some of them, and they miss the send.
    const before = replicas.reads().replicas[0]!;
    let stale = 0;
    for (let i = 0; i < 50; i += 1) {
      const write = await send();
      if (!seqsOf(await gql(NEWEST_PAGE, { c: conversationId })).includes(write.seq)) stale += 1;
    }
    const servedByReplica = replicas.reads().replicas[0]! - before;
    expect(servedByReplica).toBeGreaterThan(0);
    expect(stale).toBeGreaterThan(0);
    console.log(`${TRIES} sends each read with its token by ${CLIENTS} clients in ${tokenReadsMs} ms, none missing; without a token: ${servedByReplica} of 50 reads on the replica, ${stale} missed their send`);
    await replica.setApplyDelay(0);
  });

  it('keeps reading (from the primary) within 5 s of the replica stopping, and reads from it again within 30 s of its return', { timeout: 90_000 }, async () => {
    const write = await send();
    await replica.stop();
    const stoppedAt = Date.now();
    const failures: unknown[] = [];
    let reads = 0;
    while (Date.now() - stoppedAt < 3000) {
      const read = await gql(NEWEST_PAGE, { c: conversationId });
      reads += 1;
      if (read.body.errors !== undefined || !seqsOf(read).includes(write.seq)) failures.push(read.body.errors ?? seqsOf(read));
    }
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(10);
    const outage = await readyz();
    expect([outage.status, outage.replicas.map((r) => r.state)]).toEqual(['ready', ['down']]);

    await replica.start();
    const startedAt = Date.now();
    await untilReplicaServes();
    console.log(`replica back in rotation ${Date.now() - startedAt} ms after it started`);
    expect((await readyz()).replicas.map((r) => r.state)).toEqual(['in rotation']);
  });

  it(`keeps every read within ${HUNG_READ_BOUND_MS} ms while the replica hangs (SIGSTOP), takes it out of rotation within ${OUT_OF_ROTATION_WITHIN_MS} ms, and reads from it again within 30 s of SIGCONT`, { timeout: 90_000 }, async () => {
    await vi.waitFor(() => expect(replicas.report()[0]!.state).toBe('in rotation'), { timeout: 30_000, interval: 100 });
    const write = await send();
    // Reads without a token see the send on the replica too.
    await vi.waitFor(() => expect(parseWalPosition(replicas.report()[0]!.replayed ?? '0/0')! >= parseWalPosition(write.token)!).toBe(true), { timeout: 10_000 });

    interface Read {
      startedAt: number;
      ms: number;
      /** What went wrong: an error code, or the seqs of a page missing the send; null: none. */
      problem: unknown;
    }
    const log: Read[] = [];
    let done = false;
    /** Reads the newest page of the shared conversation until `done`: it shows `write`. */
    const reader = async () => {
      while (!done) {
        const startedAt = Date.now();
        const read = await gql(NEWEST_PAGE, { c: conversationId });
        const problem = read.body.errors?.map((e) => e.extensions?.code) ?? (seqsOf(read).includes(write.seq) ? null : seqsOf(read));
        log.push({ startedAt, ms: Date.now() - startedAt, problem });
      }
    };
    /** Sends to `into` and reads it back with the send's token, which a hung replica never replays: the read waits for it at most REPLICA_MAX_WAIT_MS. */
    const tokenReader = async (into: string) => {
      while (!done) {
        const own = await send(into);
        const startedAt = Date.now();
        const read = await gql(NEWEST_PAGE, { c: into }, own.token);
        const problem = read.body.errors?.map((e) => e.extensions?.code) ?? (seqsOf(read).includes(own.seq) ? null : seqsOf(read));
        log.push({ startedAt, ms: Date.now() - startedAt, problem });
      }
    };
    const own = (await gql('mutation { createConversation(input: { memberIds: ["bob"] }) { conversation { id } } }', {})).body.data.createConversation.conversation.id as string;
    const readers = Promise.all([reader(), reader(), reader(), tokenReader(own)]);
    // Awaited below; a reader failing meanwhile is not an unhandled rejection.
    readers.catch(() => undefined);
    try {
      // Reads are under way on the replica when it hangs.
      const started = replicas.reads().replicas[0]!;
      await vi.waitFor(() => expect(replicas.reads().replicas[0]).toBeGreaterThan(started + 20), { timeout: 10_000, interval: 10 });
      const readsBefore = replicas.reads().replicas[0]!;
      await hang(replica, hung);
      const stoppedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, HANG_MS));
      const metrics = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
      const duringHang = {
        readyz: await readyz(),
        inRotationGauge: /^backscroll_db_replica_in_rotation\{replica="0"\} (\S+)$/m.exec(metrics)?.[1],
      };
      done = true;
      await readers;

      const afterStop = log.filter((r) => r.startedAt + r.ms > stoppedAt);
      const inFlightAtStop = afterStop.filter((r) => r.startedAt <= stoppedAt);
      const late = afterStop.filter((r) => r.startedAt >= stoppedAt + OUT_OF_ROTATION_WITHIN_MS);
      const left = changes.find((c) => c.at >= stoppedAt && c.state !== 'in rotation');
      const slowest = (reads: Read[]) => Math.max(0, ...reads.map((r) => r.ms));
      console.log(
        `replica hung: ${afterStop.length} reads ended after the stop, ${replicas.reads().replicas[0]! - readsBefore} of them sent to the hung replica; ` +
          `${inFlightAtStop.length} in flight at the stop, the slowest ${slowest(inFlightAtStop)} ms; the slowest of all ${slowest(afterStop)} ms; ` +
          `${late.length} started ${OUT_OF_ROTATION_WITHIN_MS} ms or more after it, the slowest ${slowest(late)} ms; ` +
          `out of rotation (${left?.state}) ${left === undefined ? 'never' : `${left.at - stoppedAt} ms`} after the stop`,
      );
      expect({
        failed: afterStop.filter((r) => r.problem !== null),
        slow: afterStop.filter((r) => r.ms > HUNG_READ_BOUND_MS),
        slowLate: late.filter((r) => r.ms > PROMPT_READ_MS),
        leftWithin: left !== undefined && left.at - stoppedAt < OUT_OF_ROTATION_WITHIN_MS,
        duringHang: { status: duringHang.readyz.status, states: duringHang.readyz.replicas.map((r) => r.state), inRotationGauge: duringHang.inRotationGauge },
      }).toEqual({ failed: [], slow: [], slowLate: [], leftWithin: true, duringHang: { status: 'ready', states: ['down'], inRotationGauge: '0' } });
      expect(late.length).toBeGreaterThan(10);
      expect(inFlightAtStop.length).toBeGreaterThan(0);
    } finally {
      done = true;
      await readers.catch(() => undefined);
      wake(hung.splice(0));
    }

    const wokenAt = Date.now();
    await untilReplicaServes();
    const back = changes.find((c) => c.at >= wokenAt && c.state === 'in rotation');
    console.log(`hung replica back in rotation ${back === undefined ? '?' : back.at - wokenAt} ms after SIGCONT, serving reads ${Date.now() - wokenAt} ms after it`);
    expect((await readyz()).replicas.map((r) => r.state)).toEqual(['in rotation']);
  });

  it('counts reads per target and shows each replica\'s lag and rotation in /metrics', async () => {
    const text = await (await fetch(server.url.replace('/graphql', '/metrics'))).text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    const { primary: primaryReads, replicas: replicaReads } = replicas.reads();
    expect([
      value('backscroll_db_reads_total{target="primary"}'),
      value('backscroll_db_reads_total{target="replica0"}'),
      value('backscroll_db_replica_in_rotation{replica="0"}'),
    ]).toEqual([primaryReads, replicaReads[0], 1]);
    // Both served reads by now: the primary for the token reads the replica was too late for, the replica for the rest.
    expect(primaryReads).toBeGreaterThan(0);
    expect(replicaReads[0]).toBeGreaterThan(0);
    expect(value('backscroll_db_replica_lag_seconds{replica="0"}')).toBeGreaterThanOrEqual(0);
  });

  it('gives each live event the token of its commit: a read with it shows what the event announced', async () => {
    const live = liveClient(server.url, { authorization: `Bearer ${token}` });
    try {
      const subscription = live.subscribe(`subscription ($c: ID!) { conversationEvents(conversationId: $c) { kind seq } }`, { c: conversationId });
      // The subscription is open once a send made after subscribing arrives.
      await vi.waitFor(
        async () => {
          const write = await send();
          const event = await subscription.next(1000);
          expect(event.data?.conversationEvents.seq).toBe(write.seq);
        },
        { timeout: 15_000 },
      );
      const write = await send();
      const event = await subscription.next(5000);
      expect(event.data?.conversationEvents).toEqual({ kind: 'MESSAGE_SENT', seq: write.seq });
      const eventToken = (event.extensions as { consistency?: string } | undefined)?.consistency;
      expect(parseWalPosition(eventToken ?? '')).not.toBe(null);
      const read = await gql(NEWEST_PAGE, { c: conversationId }, eventToken);
      expect(seqsOf(read)).toContain(write.seq);
    } finally {
      await live.dispose();
    }
  });
});
