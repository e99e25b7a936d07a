/**
 * Where PostgreSQL's CPU goes for one page scenario, ours beside raw SQL's:
 * `npm run bench:pgprof -- <scenario> [seconds]` serves the bench data with
 * a fresh server (one worker), warms it, then samples every process on the
 * box with `perf record` twice, while the server is loaded (4 connections)
 * and while raw SQL's twin of the same page is (bench/loadRaw.ts, 4
 * connections), and prints PostgreSQL's CPU per request by kind of work
 * (bench/pgSymbols.ts) and the functions whose cost differs most.
 *
 * Needs Linux's `perf` (Debian package linux-perf) and PostgreSQL on this
 * box; the rates it prints are those of a sampled run, so compare its
 * figures with each other, not with `npm run bench`'s.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { BENCH_SECRET, startBenchServer } from './benchServer.ts';
import { runGraphQLLoad } from './graphqlLoad.ts';
import { KINDS, microsPerRequest, OTHER, parsePerfReport, parseSymbolTable, samplesByKind, samplesBySymbol, type SymbolSamples } from './pgSymbols.ts';
import { benchUserTokens, type PageScenario, pageRequest } from './scenarios.ts';
import { markdownTable } from './table.ts';

const SCENARIOS: readonly PageScenario[] = ['random-newest', 'hot-newest', 'hot-deep', 'hot-around'];
const CONNECTIONS = 4;
/** Samples a second per CPU: enough for a few thousand per run, little enough not to weigh on it. */
const FREQUENCY = 999;
/** The functions listed, by how much more (or less) ours spends in them per request. */
const TOP_FUNCTIONS = 15;

/** Records every CPU of the box at FREQUENCY into `file` while `command` runs; answers what the command printed. */
function perfRecord(file: string, command: string[]): Promise<string> {
  const perf = spawn('perf', ['record', '-a', '-q', '-F', String(FREQUENCY), '-o', file, '--', ...command], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  perf.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => perf.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`perf record exited ${code}`)))));
}

/** PostgreSQL's samples in `file`, by function. */
function postgresSamples(file: string): SymbolSamples[] {
  return parsePerfReport(execFileSync('perf', ['report', '-i', file, '--comm', 'postgres', '--sort', 'sym', '-n', '--stdio'], { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] }));
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const [scenario = 'random-newest', secondsArg = '8'] = process.argv.slice(2);
  if (url === undefined || !SCENARIOS.includes(scenario as PageScenario)) {
    console.error(`usage: DATABASE_URL=… npm run bench:pgprof -- <${SCENARIOS.join('|')}> [seconds]`);
    process.exit(2);
  }
  if (spawnSync('perf', ['--version']).status !== 0) {
    console.error('pgprof: needs Linux perf on the PATH (Debian package linux-perf); it is not here.');
    process.exit(2);
  }
  const seconds = Number(secondsArg);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  // The backend's own binary, for naming the addresses of its static functions.
  const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const symbols = parseSymbolTable(execFileSync('nm', ['-D', '--defined-only', readlinkSync(`/proc/${backend!.pid}/exe`)], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  await sql.end();

  const tokens = await benchUserTokens(BENCH_SECRET);
  const dir = mkdtempSync(join(tmpdir(), 'pgprof-'));
  console.log(`pgprof: starting a server of 1 worker on the bench data, then warming it for ${2 * seconds} s...`);
  const server = await startBenchServer(url, 1);
  const load = (label: string) =>
    runGraphQLLoad({
      url: server.url,
      connections: CONNECTIONS,
      seconds,
      label,
      next: () => {
        const request = pageRequest(scenario as PageScenario);
        return { body: request.body, token: tokens.get(request.userId)! };
      },
    });
  let ours: { requests: number; samples: SymbolSamples[] };
  try {
    await load('warm-up');
    await load('warm-up');
    console.log(`pgprof: ${scenario} through the server, ${seconds} s under perf...`);
    const oursFile = join(dir, 'ours.data');
    const [, result] = await Promise.all([perfRecord(oursFile, ['sleep', String(seconds)]), load(scenario)]);
    ours = { requests: result.requests, samples: postgresSamples(oursFile) };
  } finally {
    server.process.kill('SIGTERM');
    await new Promise((resolve) => server.process.once('exit', resolve));
  }
  console.log(`pgprof: ${scenario} as raw SQL, ${seconds} s under perf...`);
  const rawFile = join(dir, 'raw.data');
  // perf runs the load process itself, so the whole run is sampled; the load prints its JSON line.
  const rawOutput = await perfRecord(rawFile, [process.execPath, '--import', 'tsx', 'bench/loadRaw.ts', scenario, String(CONNECTIONS), String(seconds)]);
  const raw = { requests: (JSON.parse(rawOutput.trim().split('\n').pop()!) as { requests: number }).requests, samples: postgresSamples(rawFile) };
  rmSync(dir, { recursive: true, force: true });

  const us = (samples: number, requests: number) => microsPerRequest(samples, FREQUENCY, requests);
  const oursKinds = samplesByKind(samplesBySymbol(ours.samples, symbols));
  const rawKinds = samplesByKind(samplesBySymbol(raw.samples, symbols));
  const kindRows = [...KINDS.map((k) => k.kind), OTHER].map((kind) => {
    const [o, r] = [us(oursKinds.get(kind)!, ours.requests), us(rawKinds.get(kind)!, raw.requests)];
    return [kind, o.toFixed(0), r.toFixed(0), (o - r).toFixed(0)];
  });
  const total = (s: SymbolSamples[]) => s.reduce((sum, line) => sum + line.samples, 0);
  const [oursTotal, rawTotal] = [us(total(ours.samples), ours.requests), us(total(raw.samples), raw.requests)];
  kindRows.push(['all of PostgreSQL', oursTotal.toFixed(0), rawTotal.toFixed(0), (oursTotal - rawTotal).toFixed(0)]);
  console.log(`\n## PostgreSQL's CPU per request, ${scenario} (µs; ours ${ours.requests} requests, raw ${raw.requests}, ${seconds} s each)\n`);
  console.log(markdownTable(['kind of work', 'ours', 'raw SQL', 'ours - raw'], kindRows));

  const bySymbol = new Map<string, { ours: number; raw: number }>();
  const add = (lines: SymbolSamples[], requests: number, side: 'ours' | 'raw') => {
    for (const line of samplesBySymbol(lines, symbols)) {
      const key = `${line.kernel ? '[kernel] ' : ''}${line.symbol}`;
      const entry = bySymbol.get(key) ?? { ours: 0, raw: 0 };
      entry[side] += us(line.samples, requests);
      bySymbol.set(key, entry);
    }
  };
  add(ours.samples, ours.requests, 'ours');
  add(raw.samples, raw.requests, 'raw');
  const top = [...bySymbol].sort((a, b) => b[1].ours - b[1].raw - (a[1].ours - a[1].raw)).slice(0, TOP_FUNCTIONS);
  console.log(`\n## The ${TOP_FUNCTIONS} functions where ours spends most more than raw SQL (µs per request)\n`);
  console.log(markdownTable(['function', 'ours', 'raw SQL', 'ours - raw'], top.map(([name, v]) => [name, v.ours.toFixed(1), v.raw.toFixed(1), (v.ours - v.raw).toFixed(1)])));
}

await main();
