/**
 * Where a page request's (or a send's) CPU goes, on both sides of the
 * database connection: `npm run bench:cpu -- <scenario> [seconds] [slices]
 * [workers]` serves the bench data with a fresh server (BENCH_WORKERS-style
 * worker count, default 1), loads it with one page, send or search
 * scenario (`search`: the search row's plain searches, as its user) from
 * this process (`CPU_CONNECTIONS` connections, default 4; the bench's send
 * rows use 20), and prints, for each slice, the rate, the server's CPU per
 * request and PostgreSQL's (the CPU of every client backend of the
 * database, from /proc, so Linux only and PostgreSQL on this box).
 *
 * CPU per request holds on a busy box where rates and latencies do not, and
 * the slices show a fresh server's first seconds apart from its steady
 * state. `CPU_IDLE_SECONDS` pauses the load that long after half the
 * slices, for what a quiet spell costs the requests after it (V8's memory
 * reducer: src/workerFlags.ts). Compare two builds by alternating runs (a worktree of the other
 * commit), as the README's Performance entries do. `BENCH_SERVER_NODE_ARGS`
 * passes node flags to the server (`--cpu-prof --cpu-prof-dir=…` for a
 * profile of the same load).
 */
import postgres from 'postgres';
import { BENCH_SECRET, processCpuMs, serverCpuMs, startBenchServer } from './benchServer.ts';
import { runGraphQLLoad } from './graphqlLoad.ts';
import { benchUserTokens, type PageScenario, pageRequest, type SendScenario, sendRequest } from './scenarios.ts';
import { searchBenchBody } from './search.ts';
import { signToken } from '../src/auth/tokens.ts';
import { SEARCH_BENCH_USER } from '../src/seed/benchData.ts';

type Scenario = PageScenario | SendScenario | 'search';
const SCENARIOS: readonly Scenario[] = ['random-newest', 'hot-newest', 'hot-deep', 'hot-around', 'send-hot', 'send-spread', 'search'];

/** The next request of `scenario`, a page read, a send or a search: who asks and the body. */
function nextRequest(scenario: Scenario): { userId: string; body: string } {
  if (scenario === 'search') return { userId: SEARCH_BENCH_USER, body: searchBenchBody('search') };
  return scenario === 'send-hot' || scenario === 'send-spread' ? sendRequest(scenario) : pageRequest(scenario);
}
const CONNECTIONS = Number(process.env.CPU_CONNECTIONS ?? 4);
const IDLE_SECONDS = Number(process.env.CPU_IDLE_SECONDS ?? 0);

/** CPU time so far (user and system, ms) of each client backend of the current database but this connection's. */
async function backendCpuMs(sql: postgres.Sql): Promise<Map<number, number>> {
  const backends = await sql<{ pid: number }[]>`select pid from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;
  const cpu = new Map<number, number>();
  for (const { pid } of backends) {
    try {
      cpu.set(pid, processCpuMs(pid));
    } catch {
      // The backend ended between the two reads.
    }
  }
  return cpu;
}

/** The CPU the backends spent between two readings; a backend that started in between counts from its start. */
function spentBetween(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const [scenario = 'random-newest', secondsArg = '4', slicesArg = '3', workersArg = '1'] = process.argv.slice(2);
  if (url === undefined || !SCENARIOS.includes(scenario as Scenario)) {
    console.error(`usage: DATABASE_URL=… npm run bench:cpu -- <${SCENARIOS.join('|')}> [seconds per slice] [slices] [workers]`);
    process.exit(2);
  }
  const [seconds, slices, workers] = [Number(secondsArg), Number(slicesArg), Number(workersArg)];
  const tokens = await benchUserTokens(BENCH_SECRET);
  tokens.set(SEARCH_BENCH_USER, await signToken(BENCH_SECRET, SEARCH_BENCH_USER, 3600));
  const sql = postgres(url, { max: 1 });
  console.log(`cpu: starting a server of ${workers} worker(s) on the bench data...`);
  const server = await startBenchServer(url, workers);
  try {
    for (let slice = 0; slice < slices; slice++) {
      if (IDLE_SECONDS > 0 && slice === Math.floor(slices / 2)) {
        console.log(`cpu: no requests for ${IDLE_SECONDS} s...`);
        await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
      }
      const serverBefore = serverCpuMs(server.process.pid!);
      const backendsBefore = await backendCpuMs(sql);
      const result = await runGraphQLLoad({
        url: server.url,
        connections: CONNECTIONS,
        seconds,
        label: scenario,
        next: () => {
          const request = nextRequest(scenario as Scenario);
          return { body: request.body, token: tokens.get(request.userId)! };
        },
      });
      const serverMs = serverCpuMs(server.process.pid!) - serverBefore;
      const backendMs = spentBetween(backendsBefore, await backendCpuMs(sql));
      const perRequest = (ms: number) => ((ms * 1000) / result.requests).toFixed(0);
      console.log(
        `cpu: ${scenario}, slice ${slice + 1} of ${slices} (${seconds} s): ${result.perSecond.toFixed(0)} req/s, ` +
          `server ${perRequest(serverMs)} µs/request, PostgreSQL ${perRequest(backendMs)} µs/request, ${result.failures} failures`,
      );
    }
  } finally {
    server.process.kill('SIGTERM');
    await new Promise((resolve) => server.process.once('exit', resolve));
    await sql.end();
  }
}

await main();
