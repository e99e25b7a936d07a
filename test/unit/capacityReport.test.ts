import { describe, expect, it } from 'vitest';
import type { Figures, FigureSource, StorageFigure } from '../../bench/capacity/figures.ts';
import { planCapacity, type PlanRules, type TargetLoad, unitCosts } from '../../bench/capacity/model.ts';
import { bytes, capacityReport, count } from '../../bench/capacity/report.ts';

const source: FigureSource = { file: 'bench/results/2026-12-01T19-10-01Z-c876dfa.json', commit: 'c876dfa0000', dirty: false, date: '2026-12-01T19:10:01.000Z', seconds: 8, workers: 2 };
const storage: StorageFigure = { messages: 1_000_000, indexRowBytes: 250_000_000, bodyTableBytes: 600_000_000, bodyIndexBytes: 400_000_000 };
const figures: Figures = {
  pages: {
    source,
    scenarios: (['random-newest', 'hot-newest', 'hot-deep', 'hot-around'] as const).map((scenario) => ({ scenario, fullPerSecond: 500, rawPerSecond: 1000, statements: 1 })),
  },
  sends: { source, spread: { fullPerSecond: 400, rawPerSecond: 2000 }, hot: { fullPerSecond: 500, rawPerSecond: 700 } },
  storage: { source, hot: storage, archived: { archivedMessages: 1_000_000, segmentBytes: 5_000_000 } },
  memory: { source, workerPeakMb: 280 },
  searchVectors: null,
};
const rules: PlanRules = {
  utilisation: 0.5,
  databaseCores: 16,
  maxBytesPerPrimary: 10e12,
  minReplicas: 1,
  minServerCores: 2,
  archiveCompression: 4,
  benchCores: 2,
  sendStatements: 2,
  pageScenario: 'random-newest',
};
// 864,000 users, 10 messages and 10 pages a day each: 100 a second of each, 300 at peak.
const load: TargetLoad = { users: 864_000, messagesPerUser: 10, pagesPerUser: 10, years: 2, archiveAfterDays: 365, peakFactor: 3 };

describe('Capacity report: numbers', () => {
  it('prints counts with thousands separators and the decimals asked for', () => {
    expect([count(1234567), count(0.4), count(2.345, 1), count(9.6, 1)]).toEqual(['1,234,567', '0', '2.3', '9.6']);
  });

  it('prints bytes in decimal units with three significant figures at most', () => {
    expect([bytes(950), bytes(12_345), bytes(1_500_000), bytes(157_680_000_000), bytes(2.8728e12), bytes(745e12), bytes(1.2e15)]).toEqual([
      '950 B',
      '12.3 kB',
      '1.50 MB',
      '158 GB',
      '2.87 TB',
      '745 TB',
      '1.20 PB',
    ]);
  });
});

describe('Capacity report: what it prints', () => {
  const costs = unitCosts(figures, rules);
  if (!costs.ok) throw new Error(costs.problem);
  const plan = planCapacity(load, rules, costs.costs);
  const report = capacityReport(load, rules, figures, costs.costs, plan, ['a note']);

  it('heads with the load and its rates', () => {
    expect(report.split('\n\n').slice(0, 3)).toEqual([
      '# Capacity for 864,000 daily active users',
      "864,000 daily active users, each sending 10 messages and reading 10 pages of 50 a day; messages kept 2 years, bodies archived after 365 days; peak 3 × the day's mean.",
      [
        "|            | day's mean /s | peak /s |",
        '|------------|-------------:-|-------:-|',
        '| page reads |           100 |     300 |',
        '| sends      |           100 |     300 |',
      ].join('\n'),
    ]);
  });

  it('says what is needed and the arithmetic behind it', () => {
    // Server: 300 × 2 ms + 300 × 4 ms = 1.8 cores busy, at 50%: 4. PostgreSQL: 300 × (1 + 2) ms = 0.9 cores of writes, 300 × 2 ms = 0.6 of reads.
    expect(report).toContain(
      [
        '|                                     |               needed |',
        '|-------------------------------------|--------------------:-|',
        '| server cores                        |                    4 |',
        '| server memory                       | 4 × 280 MB = 1.17 GB |',
        '| PostgreSQL primaries (16 cores)     |                    1 |',
        '| PostgreSQL replicas (16 cores)      |    1 (1 per primary) |',
        '| PostgreSQL bytes per instance       |              4.73 TB |',
        '| PostgreSQL bytes, every instance    |              9.46 TB |',
        '| archive segments (bucket or folder) |               473 GB |',
      ].join('\n'),
    );
    expect(report).toContain('- Server cores: 300 pages/s × 2.000 ms + 300 sends/s × 4.000 ms = 1.8 cores busy at peak, planned at 50% (at least 2);');
    // 6.3072 billion messages × 250 bytes hot + 3.1536 billion × 1,000 warm.
    expect(report).toContain(
      '- Primaries: writes keep 0.90 cores busy at peak (8.0 per primary at 50%); PostgreSQL holds 4.73 TB at year 2 (10.0 TB per primary at most): one primary holds it.',
    );
    expect(report).toContain('- Replicas: page reads keep 0.60 cores busy at peak (8.0 per replica at 50%); at least 1 per primary.');
  });

  it('prints storage year by year, with what each year added', () => {
    // 8,640,000 messages a day, 3.1536 billion a year: the first year whole in PostgreSQL at 1,250 bytes; the second's index rows at 250 and bodies archived at 150 (600 / 4 over the measured 5).
    expect(report).toContain(
      [
        '| end of year |      messages | hot: under 365 days, whole in PostgreSQL | warm: older, index rows in PostgreSQL | archived: older, bodies in segments | PostgreSQL | added this year |',
        '|-------------|-------------:-|----------------------------------------:-|-------------------------------------:-|-----------------------------------:-|----------:-|---------------:-|',
        '| 1           | 3,153,600,000 |                                  3.94 TB |                                   0 B |                                 0 B |    3.94 TB |         3.94 TB |',
        '| 2           | 6,307,200,000 |                                  3.94 TB |                                788 GB |                              473 GB |    4.73 TB |         1.26 TB |',
      ].join('\n'),
    );
  });

  it('says the archived floor keeps the search vector in when no run measured it, and leaves it out when one did', () => {
    expect(report).toContain('and the body row (600 bytes, search vector included: no run measured it) / 4 (`--archive-compression`).');
    const withVectors = { ...figures, searchVectors: { source, bytesPerMessage: 400 } };
    const measured = unitCosts(withVectors, rules);
    if (!measured.ok) throw new Error(measured.problem);
    const text = capacityReport(load, rules, withVectors, measured.costs, planCapacity(load, rules, measured.costs));
    expect(text).toContain('archived 50 in segments: the larger of the measured segment bytes (5.0,');
    expect(text).toContain('and the body row (600 bytes less its 400 of search vector, which is not archived: 200) / 4 (`--archive-compression`).');
    expect(text).toContain('- search vectors: bench/results/2026-12-01T19-10-01Z-c876dfa.json');
  });

  it('names every source and passes notes on', () => {
    expect(report).toContain('- pages: bench/results/2026-12-01T19-10-01Z-c876dfa.json (run of 2026-12-01T19:10:01.000Z at c876dfa, 8 s per load run, 2 server processes)');
    expect(report).toContain('- memory: bench/results/2026-12-01T19-10-01Z-c876dfa.json');
    expect(report).not.toContain('- search vectors:');
    expect(report.endsWith('- a note')).toBe(true);
  });
});
