import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { change, compareRuns } from '../../bench/compare.ts';
import { type BenchRun, readRun, resultFileName, writeRun } from '../../bench/results.ts';
import { num, percent, printTable, type ResultTable, words } from '../../bench/table.ts';

const PAGES_HEADER = ['', 'req/s', 'p99 ms', 'of raw'];
const pages = (newest: number, p99: number, ofRaw: number, seconds = 15): ResultTable => ({
  id: 'pages',
  title: `Page reads (${seconds} s each)`,
  header: PAGES_HEADER,
  rows: [{ label: '(b) newest page', cells: [num(newest), num(p99, 2), num(ofRaw, 2)] }],
});
const purge = (kept: number, met: string): ResultTable => ({
  id: 'purge',
  title: 'Retention purge',
  header: ['', 'measured', 'target', 'met'],
  rows: [{ label: 'page rate kept', cells: [percent(kept), words('≥ 80%'), words(met)] }],
});
const runA: BenchRun = {
  commit: 'aaaaaaa1111111111111111111111111111111111',
  dirty: false,
  date: '2026-12-01T10:00:00.123Z',
  settings: { seconds: 15, workers: 2, sections: ['pages', 'purge'] },
  sections: {
    pages: { tables: [pages(1000, 20, 0.25)], notes: [], measurements: {} },
    purge: { tables: [purge(0.9, 'yes')], notes: [], measurements: {} },
  },
};
const runB: BenchRun = {
  commit: 'bbbbbbb2222222222222222222222222222222222',
  dirty: true,
  date: '2026-12-02T11:30:00.000Z',
  settings: { seconds: 10, workers: 2, sections: ['pages', 'fanout'] },
  sections: {
    pages: {
      tables: [
        {
          ...pages(1100, 15, 0.3, 10),
          rows: [...pages(1100, 15, 0.3).rows, { label: '(e) new scenario', cells: [num(5), num(1, 2), num(0.5, 2)] }],
        },
      ],
      notes: [],
      measurements: {},
    },
    fanout: { tables: [], notes: [], measurements: {} },
  },
};

describe('Bench compare: the change of a figure', () => {
  it('is the signed change from A to B in per cent, with one decimal', () => {
    expect([change(num(1000), num(1100)), change(num(20), num(15)), change(num(0.25), num(0.25)), change(num(-2), num(-1))]).toEqual([
      '+10.0%',
      '-25.0%',
      '0.0%',
      '+50.0%',
    ]);
  });

  it('is empty where there is nothing to divide or compare, and "changed" for differing text', () => {
    expect([change(num(0), num(5)), change(undefined, num(5)), change(words('yes'), words('yes')), change(words('yes'), words('NO'))]).toEqual([
      '',
      '',
      '',
      'changed',
    ]);
  });
});

describe('Bench compare: two runs side by side', () => {
  it('prints a table per section with A, B and the change of each figure, pairing tables by id whatever their titles', () => {
    expect(compareRuns(runA, runB)).toBe(
      [
        '# Benchmark comparison',
        '',
        'A: 2026-12-01T10:00:00.123Z at aaaaaaa',
        'B: 2026-12-02T11:30:00.000Z at bbbbbbb (with uncommitted changes)',
        '',
        '## pages',
        '',
        '|                          |     A |     B | change |',
        '|--------------------------|-----:-|-----:-|------:-|',
        '| (b) newest page: req/s   |  1000 |  1100 | +10.0% |',
        '| (b) newest page: p99 ms  | 20.00 | 15.00 | -25.0% |',
        '| (b) newest page: of raw  |  0.25 |  0.30 | +20.0% |',
        '| (e) new scenario: req/s  |     — |     5 |        |',
        '| (e) new scenario: p99 ms |     — |  1.00 |        |',
        '| (e) new scenario: of raw |     — |  0.50 |        |',
        '',
        '## purge',
        '',
        'Only run A has this section.',
        '',
        '## fanout',
        '',
        'Only run B has this section.',
        '',
      ].join('\n'),
    );
  });

  it('shows text cells only where they differ, and a ratio printed as per cent changes by its number', () => {
    const worse: BenchRun = { ...runA, sections: { purge: { tables: [purge(0.72, 'NO')], notes: [], measurements: {} } } };
    const output = compareRuns({ ...runA, sections: { purge: runA.sections.purge! } }, worse);
    expect(output.split('\n').filter((line) => line.startsWith('| page'))).toEqual([
      '| page rate kept: measured | 90% | 72% |  -20.0% |',
      '| page rate kept: met      | yes |  NO | changed |',
    ]);
  });
});

describe('Bench results: the file of a run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is named by date and short commit, and read back as written', () => {
    expect(resultFileName(runA)).toBe('2026-12-01T10-00-00Z-aaaaaaa.json');
    expect(resultFileName(runB)).toBe('2026-12-02T11-30-00Z-bbbbbbb-dirty.json');
    const path = writeRun(runA, dir);
    expect(path).toBe(join(dir, '2026-12-01T10-00-00Z-aaaaaaa.json'));
    expect(readRun(path)).toEqual(runA);
  });

  it('keeps every figure a table prints, at full precision', () => {
    const table = pages(1234.5678, 19.876, 0.2468);
    const written = JSON.parse(readFileSync(writeRun({ ...runA, sections: { pages: { tables: [table], notes: [], measurements: {} } } }, dir), 'utf8'));
    expect(written.sections.pages.tables[0].rows[0].cells).toEqual([
      { text: '1235', value: 1234.5678 },
      { text: '19.88', value: 19.876 },
      { text: '0.25', value: 0.2468 },
    ]);
    expect(printTable(table).split('\n').at(-1)).toBe('| (b) newest page |  1235 |  19.88 |   0.25 |');
  });

  it('refuses a file that is not a run, naming it', () => {
    const path = join(dir, 'other.json');
    writeFileSync(path, '{"hello": 1}');
    expect(() => readRun(path)).toThrow(`${path} is not a benchmark result (it needs commit, date and sections).`);
  });
});
