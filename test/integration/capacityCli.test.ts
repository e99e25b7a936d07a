/**
 * `npm run capacity` as a reader runs it: `node --import tsx
 * bench/capacity.ts` in a child process, on a results file the test
 * writes. The arithmetic is tested in test/unit/capacity*.test.ts; this
 * checks the thin command around it: which files it reads, the committed
 * reference for what they lack, and its refusals. It never passes
 * --save-reference, which rewrites the committed file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchRun } from '../../bench/results.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'backscroll-capacity-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Runs the command with `args`; its exit code and output. */
function capacity(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bench/capacity.ts', ...args], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

const load = (perSecond: number) => ({ requests: perSecond * 5, perSecond, p50: 1, p99: 2, failures: 0 });
/** A run with only the pages section: 500 pages/s through GraphQL, 1,000 raw, in every scenario. */
const pagesOnly: BenchRun = {
  commit: 'feedbee'.padEnd(40, '0'),
  dirty: false,
  date: '2026-12-02T04:00:00.000Z',
  settings: { seconds: 5, workers: 2, sections: ['pages'] },
  sections: {
    pages: {
      tables: [],
      notes: [],
      measurements: Object.fromEntries(
        ['random-newest', 'hot-newest', 'hot-deep', 'hot-around'].map((s) => [s, { full: load(500), raw: load(1000), cost: { statements: 1, batches: [] } }]),
      ),
    },
  },
};

describe('npm run capacity', () => {
  it('reads the page figures from the file named and the rest from the committed reference, saying so', async () => {
    const file = join(folder, 'pages.json');
    writeFileSync(file, JSON.stringify(pagesOnly));
    const { code, stdout, stderr } = await capacity(['--results', file, '--users', '10000']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('# Capacity for 10,000 daily active users');
    // 2 / 500 - 2 / 1,000 = 2 ms of a server core per page.
    expect(stdout).toContain('Page: 2 / 500 − 2 / 1,000 = 2.000 ms, 500 pages/s per server core');
    expect(stdout).toContain(`- pages: ${file} (run of 2026-12-02T04:00:00.000Z at feedbee, 5 s per load run, 2 server processes)`);
    expect(stdout).toMatch(/^- sends: bench\/capacityReference\.json: /m);
    expect(stdout).toMatch(/^- storage: bench\/capacityReference\.json: /m);
    expect(stdout).toContain(`- the sections no file in ${file} has are the committed reference's`);
  });

  it('refuses a file that is not a results file, naming it', async () => {
    const file = join(folder, 'not-a-run.json');
    writeFileSync(file, JSON.stringify({ hello: 'world' }));
    expect(await capacity(['--results', file])).toEqual({
      code: 1,
      stdout: '',
      stderr: `capacity: ${file} is not a benchmark result (it needs commit, date and sections).\n`,
    });
  });

  it('refuses a bad flag before reading anything', async () => {
    expect(await capacity(['--users', 'many'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'capacity: --users (daily active users) must be a whole number at least 1, got "many".\n',
    });
  });
});
