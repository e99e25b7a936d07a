import { describe, expect, it } from 'vitest';
import type { ArchivedFigure, Figures, FigureSource, StorageFigure } from '../../bench/capacity/figures.ts';
import {
  bytesPerMessage,
  planCapacity,
  type PlanRules,
  ratesOf,
  serverSecondsPerRequest,
  storageByYear,
  type TargetLoad,
  type UnitCosts,
  unitCosts,
} from '../../bench/capacity/model.ts';

// Figures chosen so every result can be checked by hand.
const source: FigureSource = { file: 'bench/results/run.json', commit: 'abc1234', dirty: false, date: '2026-12-01T00:00:00.000Z', seconds: 15, workers: 2 };
const hotStorage: StorageFigure = {
  messages: 1_000_000,
  indexRowBytes: 200_000_000,
  bodyTableBytes: 600_000_000,
  bodyIndexBytes: 200_000_000,
};
const archivedStorage: ArchivedFigure = { archivedMessages: 500_000, segmentBytes: 10_000_000 };
const figures: Figures = {
  pages: {
    source,
    scenarios: [
      { scenario: 'random-newest', fullPerSecond: 500, rawPerSecond: 1000, statements: 2 },
      { scenario: 'hot-newest', fullPerSecond: 1000, rawPerSecond: 4000, statements: 1 },
      { scenario: 'hot-deep', fullPerSecond: 800, rawPerSecond: 800, statements: 1 },
      { scenario: 'hot-around', fullPerSecond: 400, rawPerSecond: 2000, statements: 1 },
    ],
  },
  sends: { source, spread: { fullPerSecond: 250, rawPerSecond: 1000 }, hot: { fullPerSecond: 300, rawPerSecond: 400 } },
  storage: { source, hot: hotStorage, archived: archivedStorage },
  memory: null,
  searchVectors: { source, bytesPerMessage: 200 },
};
const rules: PlanRules = {
  utilisation: 0.25,
  databaseCores: 4,
  maxBytesPerPrimary: 1e12,
  minReplicas: 1,
  minServerCores: 2,
  archiveCompression: 4,
  benchCores: 2,
  sendStatements: 2,
  pageScenario: 'random-newest',
};
// 86,400 users: a message or page per user a day is one a second.
const load: TargetLoad = { users: 86_400, messagesPerUser: 50, pagesPerUser: 100, years: 1, archiveAfterDays: 30, peakFactor: 2 };
const costs: UnitCosts = {
  serverPerPage: 0.002,
  serverPerSend: 0.006,
  databasePerPageStatement: 0.002,
  databasePerPage: 0.004,
  databasePerSend: 0.004,
  oneConversationSendsPerSecond: 400,
  indexRowBytes: 100,
  bodyBytes: 1000,
  archivedBytes: 50,
  measuredArchivedBytes: 20,
};

describe('Capacity: the server cost of a request', () => {
  it('is the bench cores over the full rate less the bench cores over the raw rate', () => {
    expect(serverSecondsPerRequest(500, 1000, 2)).toBe(0.002);
    expect(serverSecondsPerRequest(250, 1000, 2)).toBe(0.006);
    expect(serverSecondsPerRequest(250, 1000, 4)).toBe(0.012);
  });

  it('is not derivable when the full path ran as fast as raw SQL or faster', () => {
    expect(serverSecondsPerRequest(800, 800, 2)).toBeNull();
    expect(serverSecondsPerRequest(900, 800, 2)).toBeNull();
  });
});

describe('Capacity: bytes per message', () => {
  it('counts the index row hot, the body row and its indexes warm, and the segment bytes archived when above the compression floor', () => {
    const withBigSegments = { ...archivedStorage, segmentBytes: 100_000_000 };
    expect(bytesPerMessage(hotStorage, withBigSegments, 4, 0)).toEqual({ indexRowBytes: 200, bodyBytes: 800, archivedBytes: 200, measuredArchivedBytes: 200 });
  });

  it('takes the warm body row over the compression as archived bytes when the measured segments are smaller', () => {
    expect(bytesPerMessage(hotStorage, archivedStorage, 4, 0)).toEqual({ indexRowBytes: 200, bodyBytes: 800, archivedBytes: 150, measuredArchivedBytes: 20 });
    expect(bytesPerMessage(hotStorage, archivedStorage, 60, 0)).toEqual({ indexRowBytes: 200, bodyBytes: 800, archivedBytes: 20, measuredArchivedBytes: 20 });
  });

  it('leaves the search vector out of the body row it compresses, since archiving drops it', () => {
    // (600 - 200) / 4.
    expect(bytesPerMessage(hotStorage, archivedStorage, 4, 200)).toEqual({ indexRowBytes: 200, bodyBytes: 800, archivedBytes: 100, measuredArchivedBytes: 20 });
    // A vector measured larger than the row (another run's data) leaves the measured segments.
    expect(bytesPerMessage(hotStorage, archivedStorage, 4, 700)).toEqual({ indexRowBytes: 200, bodyBytes: 800, archivedBytes: 20, measuredArchivedBytes: 20 });
  });
});

describe('Capacity: unit costs from the figures', () => {
  it('derives server and PostgreSQL seconds from the chosen page scenario and the sends over 1,000 conversations', () => {
    expect(unitCosts(figures, rules)).toEqual({
      ok: true,
      costs: {
        serverPerPage: 0.002,
        serverPerSend: 0.006,
        databasePerPageStatement: 0.002,
        // Two statements a page.
        databasePerPage: 0.004,
        // The raw send's 2 / 1000, and one page statement for the rate limiter's counter.
        databasePerSend: 0.004,
        oneConversationSendsPerSecond: 400,
        indexRowBytes: 200,
        bodyBytes: 800,
        // The body row less its 200 bytes of vector, over 4.
        archivedBytes: 100,
        measuredArchivedBytes: 20,
      },
    });
  });

  it('follows the page scenario asked for', () => {
    const around = unitCosts(figures, { ...rules, pageScenario: 'hot-around' });
    expect(around).toMatchObject({ ok: true, costs: { serverPerPage: 0.004, databasePerPageStatement: 0.001, databasePerPage: 0.001, databasePerSend: 0.003 } });
  });

  it('refuses a scenario whose full path was not slower than raw, naming it', () => {
    expect(unitCosts(figures, { ...rules, pageScenario: 'hot-deep' })).toEqual({
      ok: false,
      problem: "The page hot-deep ran at least as fast through the server as raw SQL: the run says nothing of the server's cost.",
    });
  });
});

describe('Capacity: rates', () => {
  it('spreads the daily counts over 86,400 seconds and multiplies them by the peak factor', () => {
    expect(ratesOf(load)).toEqual({ meanPages: 100, peakPages: 200, meanSends: 50, peakSends: 100 });
  });
});

describe('Capacity: storage by year', () => {
  const perMessage = { indexRowBytes: 10, bodyBytes: 100, archivedBytes: 5 };
  const hundredADay: TargetLoad = { ...load, users: 100, messagesPerUser: 1, years: 2, archiveAfterDays: 90 };

  it('keeps the archive age whole in PostgreSQL (hot), and of older messages the index row (warm) with the body archived', () => {
    // 9,000 messages within 90 days at 110 bytes; the rest at 10 warm and 5 archived.
    expect(storageByYear(hundredADay, perMessage)).toEqual([
      { year: 1, messages: 36_500, hot: 990_000, warm: 275_000, archived: 137_500 },
      { year: 2, messages: 73_000, hot: 990_000, warm: 640_000, archived: 320_000 },
    ]);
  });

  it('archives nothing when the archive age is past the years kept', () => {
    expect(storageByYear({ ...hundredADay, years: 1, archiveAfterDays: 400 }, perMessage)).toEqual([
      { year: 1, messages: 36_500, hot: 4_015_000, warm: 0, archived: 0 },
    ]);
  });

  it('stops at a fractional year kept, in its last row', () => {
    expect(storageByYear({ ...hundredADay, years: 1.5, archiveAfterDays: 0 }, perMessage)).toEqual([
      { year: 1, messages: 36_500, hot: 0, warm: 365_000, archived: 182_500 },
      { year: 2, messages: 54_750, hot: 0, warm: 547_500, archived: 273_750 },
    ]);
  });
});

describe('Capacity: the plan', () => {
  // Per day 86,400 × 50 = 4,320,000 messages: 30 days whole at 1,100 bytes (142.56 GB), 335 days of index rows at 100 (144.72 GB) and bodies archived at 50.
  const storage = [{ year: 1, messages: 1_576_800_000, hot: 142_560_000_000, warm: 144_720_000_000, archived: 72_360_000_000 }];

  it('needs the minimum of everything for a small load on one primary', () => {
    expect(planCapacity(load, rules, costs)).toEqual({
      rates: { meanPages: 100, peakPages: 200, meanSends: 50, peakSends: 100 },
      // 200 × 0.002 + 100 × 0.006 = 1 core busy, at 25%: 4.
      serverCores: 4,
      serverBusyCores: 1,
      // 100 × 0.004 and 200 × 0.004, each instance 4 cores at 25%: 1 core.
      databaseWriteCores: 0.4,
      databaseReadCores: 0.8,
      primaries: 1,
      shardReasons: [],
      replicasPerPrimary: 1,
      replicas: 1,
      storage,
      bytesPerPrimary: 287_280_000_000,
    });
  });

  it('never plans fewer server cores than the minimum', () => {
    expect(planCapacity(load, { ...rules, utilisation: 1 }, costs).serverCores).toBe(2);
  });

  it('shards for storage when PostgreSQL bytes pass the limit per primary, and gives each primary its replicas', () => {
    const plan = planCapacity(load, { ...rules, maxBytesPerPrimary: 100_000_000_000 }, costs);
    expect(plan).toMatchObject({ primaries: 3, shardReasons: ['storage'], replicasPerPrimary: 1, replicas: 3, bytesPerPrimary: 95_760_000_000 });
  });

  it('shards for writes when peak sends need more than one primary at the planned utilisation', () => {
    // 500 sends/s mean, 1,000 at peak: 4 cores busy, 1 per primary. PostgreSQL bytes: 1.4256 TB + 1.4472 TB, under 10 TB.
    const plan = planCapacity({ ...load, messagesPerUser: 500 }, { ...rules, maxBytesPerPrimary: 1e13 }, costs);
    expect(plan).toMatchObject({ databaseWriteCores: 4, primaries: 4, shardReasons: ['writes'], replicasPerPrimary: 1, replicas: 4 });
    // 200 × 0.002 + 1,000 × 0.006 = 6.4 cores busy, at 25%: 25.6.
    expect(plan.serverCores).toBe(26);
  });

  it('names both limits when both are passed', () => {
    const plan = planCapacity({ ...load, messagesPerUser: 500 }, rules, costs);
    expect(plan).toMatchObject({ primaries: 4, shardReasons: ['writes', 'storage'] });
  });

  it('adds replicas for the page reads each primary gets', () => {
    // 1,000 pages/s mean, 2,000 at peak: 8 cores busy, 1 per replica.
    expect(planCapacity({ ...load, pagesPerUser: 1000 }, rules, costs)).toMatchObject({ databaseReadCores: 8, primaries: 1, replicasPerPrimary: 8, replicas: 8 });
    expect(planCapacity({ ...load, pagesPerUser: 1000 }, { ...rules, maxBytesPerPrimary: 100_000_000_000 }, costs)).toMatchObject({
      primaries: 3,
      replicasPerPrimary: 3,
      replicas: 9,
    });
  });

  it('keeps the minimum replicas when reads need none, and none when the minimum is none', () => {
    expect(planCapacity({ ...load, pagesPerUser: 0 }, rules, costs)).toMatchObject({ databaseReadCores: 0, replicasPerPrimary: 1 });
    expect(planCapacity({ ...load, pagesPerUser: 0 }, { ...rules, minReplicas: 0 }, costs)).toMatchObject({ replicasPerPrimary: 0, replicas: 0 });
  });
});
