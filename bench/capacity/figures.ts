/**
 * What the capacity model reads from benchmark results: the page and send
 * rates of the full path and of its raw SQL twin, statements per page,
 * storage hot and archived, and the server's memory, each section taken
 * from the first run (newest first) that measured it. Pure: the runs are
 * read by the caller.
 */
import type { BenchRun } from '../results.ts';

/** A results file as the model saw it: its name, and the run in it. */
export interface NamedRun {
  file: string;
  run: BenchRun;
}

/** Which run a group of figures came from. */
export interface FigureSource {
  file: string;
  commit: string;
  /** The run measured uncommitted changes to `commit`. */
  dirty: boolean;
  date: string;
  /** Seconds per load run and server processes, as the run was set. */
  seconds: number;
  workers: number;
}

/** The page scenarios of `npm run bench`, in its order. */
export const PAGE_SCENARIOS = ['random-newest', 'hot-newest', 'hot-deep', 'hot-around'] as const;
export type PageScenarioName = (typeof PAGE_SCENARIOS)[number];

/** One page scenario: GraphQL requests and raw SQL pages per second, and SQL statements per GraphQL request. */
export interface PageFigure {
  scenario: PageScenarioName;
  fullPerSecond: number;
  rawPerSecond: number;
  statements: number;
}

/** One send scenario: GraphQL sends and raw SQL send statements per second. */
export interface SendFigure {
  fullPerSecond: number;
  rawPerSecond: number;
}

/** The database's bytes with every body warm (the archive row's first measurement). */
export interface StorageFigure {
  messages: number;
  /** `messages` (the index rows): table and its indexes. */
  indexRowBytes: number;
  /** `message_bodies` (texts and search vectors): table with TOAST, and its indexes (GIN included). */
  bodyTableBytes: number;
  bodyIndexBytes: number;
}

/** What the archive row's archiver wrote: messages archived and their segments' bytes. */
export interface ArchivedFigure {
  archivedMessages: number;
  segmentBytes: number;
}

/** Everything the model needs, by section, each with its source. */
export interface Figures {
  pages: { source: FigureSource; scenarios: PageFigure[] };
  /** `spread`: 1,000 conversations (the rate per core); `hot`: one conversation (the ceiling of one conversation). */
  sends: { source: FigureSource; spread: SendFigure; hot: SendFigure };
  storage: { source: FigureSource; hot: StorageFigure; archived: ArchivedFigure };
  /** Peak resident memory of the largest server worker, MB; null when no run recorded it. */
  memory: { source: FigureSource; workerPeakMb: number } | null;
  /** Bytes of search vector on each body row (the search row measures them); null when no run did. */
  searchVectors: { source: FigureSource; bytesPerMessage: number } | null;
}

export type FiguresResult = { ok: true; figures: Figures } | { ok: false; problem: string };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const rateOf = (load: unknown): number | null => (isObject(load) && isCount(load.perSecond) && load.perSecond > 0 ? load.perSecond : null);

/** The four page scenarios of a pages section's measurements, or null when any is missing or malformed. */
function pagesOf(measurements: unknown): PageFigure[] | null {
  if (!isObject(measurements)) return null;
  const figures: PageFigure[] = [];
  for (const scenario of PAGE_SCENARIOS) {
    const m = measurements[scenario];
    if (!isObject(m) || !isObject(m.cost) || !isCount(m.cost.statements)) return null;
    const full = rateOf(m.full);
    const raw = rateOf(m.raw);
    if (full === null || raw === null) return null;
    figures.push({ scenario, fullPerSecond: full, rawPerSecond: raw, statements: m.cost.statements });
  }
  return figures;
}

/** A send scenario of a sends section's measurements, or null. */
function sendOf(measurements: unknown, scenario: 'send-spread' | 'send-hot'): SendFigure | null {
  if (!isObject(measurements) || !isObject(measurements[scenario])) return null;
  const full = rateOf(measurements[scenario].full);
  const raw = rateOf(measurements[scenario].raw);
  return full === null || raw === null ? null : { fullPerSecond: full, rawPerSecond: raw };
}

/** The archive row's `Storage` before archiving, or null. */
function storageOf(storage: unknown): StorageFigure | null {
  if (!isObject(storage) || !isObject(storage.index) || !isObject(storage.bodies)) return null;
  const { messages } = storage;
  const { table: indexTable, indexes: indexIndexes } = storage.index;
  const { table: bodyTable, indexes: bodyIndexes } = storage.bodies;
  if (![indexTable, indexIndexes, bodyTable, bodyIndexes].every(isCount) || !isCount(messages) || messages === 0) return null;
  return {
    messages,
    indexRowBytes: (indexTable as number) + (indexIndexes as number),
    bodyTableBytes: bodyTable as number,
    bodyIndexBytes: bodyIndexes as number,
  };
}

/** The archive row's `Storage` after archiving: what it archived, or null when it archived nothing. */
function archivedOf(storage: unknown): ArchivedFigure | null {
  if (!isObject(storage)) return null;
  const { archivedMessages, segmentBytes } = storage;
  return isCount(archivedMessages) && archivedMessages > 0 && isCount(segmentBytes) ? { archivedMessages, segmentBytes } : null;
}

/** The largest peak RSS of a worker (the primary process, first, only forks them), or null. */
function workerPeakOf(measurements: unknown): number | null {
  if (!isObject(measurements) || !Array.isArray(measurements.peakRssMb)) return null;
  const workers = measurements.peakRssMb.slice(1);
  return workers.length > 0 && workers.every(isCount) ? Math.max(...(workers as number[])) : null;
}

/** The search row's bytes of search vector per message, or null. */
function vectorBytesOf(measurements: unknown): number | null {
  return isObject(measurements) && isCount(measurements.vectorBytesPerMillion) ? measurements.vectorBytesPerMillion / 1e6 : null;
}

const sourceOf = ({ file, run }: NamedRun): FigureSource => ({
  file,
  commit: run.commit,
  dirty: run.dirty === true,
  date: run.date,
  seconds: run.settings?.seconds ?? Number.NaN,
  workers: run.settings?.workers ?? Number.NaN,
});

/** The first of `runs` whose section `name` `read` understands, with what it read. */
function firstWith<T>(runs: NamedRun[], name: string, read: (measurements: unknown) => T | null): { source: FigureSource; value: T } | null {
  for (const named of runs) {
    const section = named.run.sections[name];
    const value = section === undefined ? null : read(section.measurements);
    if (value !== null) return { source: sourceOf(named), value };
  }
  return null;
}

/**
 * The model's figures from `runs`, in order of preference (newest first,
 * a reference last): each section from the first run that measured it
 * whole. Says which sections no run has.
 */
export function gatherFigures(runs: NamedRun[]): FiguresResult {
  const pages = firstWith(runs, 'pages', pagesOf);
  const sends = firstWith(runs, 'sends', (m) => {
    const spread = sendOf(m, 'send-spread');
    const hot = sendOf(m, 'send-hot');
    return spread === null || hot === null ? null : { spread, hot };
  });
  const storage = firstWith(runs, 'archive', (m) => {
    if (!isObject(m)) return null;
    const hot = storageOf(m.hot);
    const archived = archivedOf(m.archived);
    return hot === null || archived === null ? null : { hot, archived };
  });
  const missing = [
    ...(pages === null ? ['pages (`npm run bench -- --only pages`)'] : []),
    ...(sends === null ? ['sends (`--only sends`)'] : []),
    ...(storage === null ? ['archive (`--only archive`)'] : []),
  ];
  if (pages === null || sends === null || storage === null) {
    return {
      ok: false,
      problem: `No results file read (${runs.map((r) => r.file).join(', ') || 'none'}) has the sections ${missing.join(', ')} that the model needs.`,
    };
  }
  // A worker's peak memory depends on what the run did: the run of the page figures first.
  const pagesRun = runs.find((r) => r.file === pages.source.file);
  const memory = firstWith([...(pagesRun ? [pagesRun] : []), ...runs], 'server', workerPeakOf);
  const vectors = firstWith(runs, 'search', vectorBytesOf);
  return {
    ok: true,
    figures: {
      pages: { source: pages.source, scenarios: pages.value },
      sends: { source: sends.source, ...sends.value },
      storage: { source: storage.source, ...storage.value },
      memory: memory === null ? null : { source: memory.source, workerPeakMb: memory.value },
      searchVectors: vectors === null ? null : { source: vectors.source, bytesPerMessage: vectors.value },
    },
  };
}

/**
 * The parts of `runs` the figures came from, as runs again (each with only
 * the sections used, their measurements and no tables): what the committed
 * reference file holds, so a fresh clone reads it the same way.
 */
export function referenceRuns(runs: NamedRun[], figures: Figures): NamedRun[] {
  const used: [string, FigureSource | undefined][] = [
    ['pages', figures.pages.source],
    ['sends', figures.sends.source],
    ['archive', figures.storage.source],
    ['server', figures.memory?.source],
    ['search', figures.searchVectors?.source],
  ];
  const out: NamedRun[] = [];
  for (const named of runs) {
    const sections = used.filter(([, source]) => source?.file === named.file).map(([name]) => name);
    if (sections.length === 0) continue;
    out.push({
      file: named.file,
      run: {
        ...named.run,
        sections: Object.fromEntries(sections.map((name) => [name, { tables: [], notes: [], measurements: named.run.sections[name]!.measurements }])),
      },
    });
  }
  return out;
}
