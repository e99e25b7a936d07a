import { describe, expect, it } from 'vitest';
import { type FigureSource, gatherFigures, type NamedRun, referenceRuns } from '../../bench/capacity/figures.ts';
import { parseCapacityArgs } from '../../bench/capacity/options.ts';
import type { BenchRun, SectionResult } from '../../bench/results.ts';

const load = (perSecond: number) => ({ requests: perSecond * 10, perSecond, p50: 1, p99: 2, failures: 0 });
const pair = (full: number, raw: number, statements?: number) => ({
  full: load(full),
  raw: load(raw),
  ...(statements === undefined ? {} : { cost: { statements, batches: [] } }),
});
const section = (measurements: unknown): SectionResult => ({ tables: [{ id: 't', title: 'T', header: [''], rows: [] }], notes: ['a note'], measurements });
const pages = section({
  'random-newest': pair(400, 1600, 1),
  'hot-newest': pair(700, 2400, 1),
  'hot-deep': pair(650, 2300, 1),
  'hot-around': pair(500, 1800, 1),
});
const sends = section({ 'send-hot': pair(500, 700), 'send-spread': pair(600, 2000) });
const storage = (messages: number, archivedMessages: number, segmentBytes: number) => ({
  messages,
  index: { table: 150_000_000, indexes: 50_000_000 },
  bodies: { table: 700_000_000, indexes: 300_000_000 },
  archivedMessages,
  segments: 10,
  segmentBytes,
});
const archive = section({ hot: storage(1_000_000, 0, 0), archived: storage(1_000_000, 780_000, 3_432_000), deep: {} });
const server = section({ peakRssMb: [170, 260, 280] });
const search = section({ search: load(130), messages: 2_000_000, indexBytesPerMillion: 93_000_000, vectorBytesPerMillion: 631_000_000 });

const run = (commit: string, date: string, sections: Record<string, SectionResult>): BenchRun => ({
  commit: commit.repeat(40).slice(0, 40),
  dirty: false,
  date,
  settings: { seconds: 8, workers: 2, sections: Object.keys(sections) },
  sections,
});
const newest: NamedRun = { file: 'bench/results/2026-12-02-a.json', run: run('a', '2026-12-02T03:00:00.000Z', { pages, search, server }) };
const older: NamedRun = { file: 'bench/results/2026-12-01-b.json', run: run('b', '2026-12-01T19:00:00.000Z', { pages, sends, archive, server }) };
const sourceOf = (named: NamedRun): FigureSource => ({ file: named.file, commit: named.run.commit, dirty: named.run.dirty, date: named.run.date, seconds: 8, workers: 2 });

describe('Capacity figures: which run each section comes from', () => {
  it('takes each section from the first run that has it, newest first', () => {
    expect(gatherFigures([newest, older])).toEqual({
      ok: true,
      figures: {
        pages: {
          source: sourceOf(newest),
          scenarios: [
            { scenario: 'random-newest', fullPerSecond: 400, rawPerSecond: 1600, statements: 1 },
            { scenario: 'hot-newest', fullPerSecond: 700, rawPerSecond: 2400, statements: 1 },
            { scenario: 'hot-deep', fullPerSecond: 650, rawPerSecond: 2300, statements: 1 },
            { scenario: 'hot-around', fullPerSecond: 500, rawPerSecond: 1800, statements: 1 },
          ],
        },
        sends: { source: sourceOf(older), spread: { fullPerSecond: 600, rawPerSecond: 2000 }, hot: { fullPerSecond: 500, rawPerSecond: 700 } },
        storage: {
          source: sourceOf(older),
          hot: { messages: 1_000_000, indexRowBytes: 200_000_000, bodyTableBytes: 700_000_000, bodyIndexBytes: 300_000_000 },
          archived: { archivedMessages: 780_000, segmentBytes: 3_432_000 },
        },
        // The workers' peak (the primary's, first, is left out).
        memory: { source: sourceOf(newest), workerPeakMb: 280 },
        searchVectors: { source: sourceOf(newest), bytesPerMessage: 631 },
      },
    });
  });

  it('passes over a section it cannot read whole (a scenario missing, a rate of zero, nothing archived) to an older run', () => {
    const { 'hot-around': _, ...threeScenarios } = pages.measurements as Record<string, unknown>;
    const broken: NamedRun = {
      file: 'bench/results/broken.json',
      run: run('c', '2026-12-03T00:00:00.000Z', {
        pages: section(threeScenarios),
        sends: section({ 'send-hot': pair(500, 700), 'send-spread': pair(0, 2000) }),
        archive: section({ hot: storage(1_000_000, 0, 0), archived: storage(1_000_000, 0, 0) }),
      }),
    };
    const gathered = gatherFigures([broken, older]);
    expect(gathered.ok && [gathered.figures.pages.source.file, gathered.figures.sends.source.file, gathered.figures.storage.source.file]).toEqual([
      older.file,
      older.file,
      older.file,
    ]);
  });

  it('names the files read and the sections none of them has', () => {
    expect(gatherFigures([newest])).toEqual({
      ok: false,
      problem: 'No results file read (bench/results/2026-12-02-a.json) has the sections sends (`--only sends`), archive (`--only archive`) that the model needs.',
    });
    expect(gatherFigures([])).toEqual({
      ok: false,
      problem:
        'No results file read (none) has the sections pages (`npm run bench -- --only pages`), sends (`--only sends`), archive (`--only archive`) that the model needs.',
    });
  });

  it("takes the workers' memory from the run of the page figures, whatever ran since", () => {
    const searchOnly: NamedRun = {
      file: 'bench/results/2026-12-03-search.json',
      run: { ...run('d', '2026-12-03T00:00:00.000Z', { search, server: section({ peakRssMb: [100, 150, 160] }) }), dirty: true },
    };
    expect(gatherFigures([searchOnly, newest, older])).toMatchObject({
      ok: true,
      figures: {
        pages: { source: sourceOf(newest) },
        memory: { source: sourceOf(newest), workerPeakMb: 280 },
        searchVectors: { source: { ...sourceOf(searchOnly), dirty: true } },
      },
    });
  });

  it('has no memory or search vector figure when no run recorded the server or search', () => {
    const noServer: NamedRun = { ...older, run: { ...older.run, sections: { pages, sends, archive } } };
    expect(gatherFigures([noServer])).toMatchObject({ ok: true, figures: { memory: null, searchVectors: null } });
  });
});

describe('Capacity figures: the reference file', () => {
  it('keeps, of each run used, only the sections used, with their measurements and without tables or notes', () => {
    const gathered = gatherFigures([newest, older]);
    if (!gathered.ok) throw new Error(gathered.problem);
    const bare = (s: SectionResult): SectionResult => ({ tables: [], notes: [], measurements: s.measurements });
    expect(referenceRuns([newest, older], gathered.figures)).toEqual([
      { file: newest.file, run: { ...newest.run, sections: { pages: bare(pages), server: bare(server), search: bare(search) } } },
      { file: older.file, run: { ...older.run, sections: { sends: bare(sends), archive: bare(archive) } } },
    ]);
  });

  it('reads back into the same figures', () => {
    const gathered = gatherFigures([newest, older]);
    if (!gathered.ok) throw new Error(gathered.problem);
    expect(gatherFigures(referenceRuns([newest, older], gathered.figures))).toEqual(gathered);
  });
});

describe('Capacity options: the command line', () => {
  it('plans for a million users with the defaults', () => {
    expect(parseCapacityArgs([])).toEqual({
      ok: true,
      options: {
        load: { users: 1_000_000, messagesPerUser: 40, pagesPerUser: 60, years: 3, archiveAfterDays: 90, peakFactor: 3 },
        rules: {
          utilisation: 0.6,
          databaseCores: 16,
          maxBytesPerPrimary: 2e12,
          minReplicas: 1,
          minServerCores: 2,
          archiveCompression: 4,
          benchCores: 2,
          sendStatements: 2,
          pageScenario: 'random-newest',
        },
        results: null,
        saveReference: false,
      },
    });
  });

  it('reads every flag, numbers with separators included', () => {
    const parsed = parseCapacityArgs([
      '--users=50,000,000',
      '--messages-per-user',
      '12.5',
      '--pages-per-user',
      '1_000',
      '--years',
      '1.5',
      '--archive-after-days',
      '0',
      '--peak-factor',
      '1',
      '--utilisation',
      '1',
      '--db-cores',
      '64',
      '--max-db-tb',
      '0.5',
      '--min-replicas',
      '0',
      '--archive-compression',
      '3',
      '--bench-cores',
      '4',
      '--page-scenario',
      'hot-deep',
      '--results',
      'bench/results/x.json',
      '--save-reference',
    ]);
    expect(parsed).toEqual({
      ok: true,
      options: {
        load: { users: 50_000_000, messagesPerUser: 12.5, pagesPerUser: 1000, years: 1.5, archiveAfterDays: 0, peakFactor: 1 },
        rules: {
          utilisation: 1,
          databaseCores: 64,
          maxBytesPerPrimary: 5e11,
          minReplicas: 0,
          minServerCores: 2,
          archiveCompression: 3,
          benchCores: 4,
          sendStatements: 2,
          pageScenario: 'hot-deep',
        },
        results: 'bench/results/x.json',
        saveReference: true,
      },
    });
  });

  it('refuses a value out of range or not a number, naming the flag, its meaning and range, and echoing the value', () => {
    expect(parseCapacityArgs(['--users', '10k'])).toEqual({ ok: false, problem: '--users (daily active users) must be a whole number at least 1, got "10k".' });
    expect(parseCapacityArgs(['--users', '0'])).toEqual({ ok: false, problem: '--users (daily active users) must be a whole number at least 1, got "0".' });
    expect(parseCapacityArgs(['--years', '0'])).toEqual({ ok: false, problem: '--years (years messages are kept) must be a number above 0, got "0".' });
    expect(parseCapacityArgs(['--utilisation', '1.2'])).toEqual({
      ok: false,
      problem: '--utilisation (share of each core planned busy at peak) must be a number above 0 and at most 1, got "1.2".',
    });
    expect(parseCapacityArgs(['--peak-factor', '0.5'])).toEqual({
      ok: false,
      problem: "--peak-factor (the peak second's rate over the day's mean) must be a number at least 1, got \"0.5\".",
    });
    expect(parseCapacityArgs(['--db-cores', '2.5'])).toMatchObject({ ok: false, problem: expect.stringContaining('--db-cores (cores of one PostgreSQL instance) must be a whole number') });
    expect(parseCapacityArgs(['--messages-per-user', ''])).toMatchObject({ ok: false, problem: expect.stringContaining('got "".') });
  });

  it('refuses an unknown page scenario, naming the four', () => {
    expect(parseCapacityArgs(['--page-scenario', 'newest'])).toEqual({
      ok: false,
      problem: '--page-scenario must be one of random-newest, hot-newest, hot-deep, hot-around, got "newest".',
    });
  });

  it('refuses unknown flags, a missing value and positional arguments, with the usage', () => {
    for (const argv of [['--user', '5'], ['--users'], ['1000000']]) {
      expect(parseCapacityArgs(argv)).toEqual({ ok: false, problem: expect.stringMatching(/\. Usage: npm run capacity -- \[--users 1000000\] .*\[--save-reference\]$/) });
    }
  });
});
