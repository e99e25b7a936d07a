/**
 * The capacity model: from a target load and the measured figures, the
 * server cores, PostgreSQL primaries and replicas, and storage by year.
 * Pure arithmetic, every rule written beside the line that applies it;
 * bench/capacity/report.ts prints it with its assumptions.
 */
import type { ArchivedFigure, Figures, PageFigure, PageScenarioName, SendFigure, StorageFigure } from './figures.ts';

/** The load to plan for. */
export interface TargetLoad {
  /** Daily active users. */
  users: number;
  messagesPerUser: number;
  pagesPerUser: number;
  /** How long messages are kept (retention): storage stops growing after this. */
  years: number;
  /** Bodies older than this many days move to archive segments. */
  archiveAfterDays: number;
  /** The busiest second's rate over the day's mean. */
  peakFactor: number;
}

/** The planning rules: what we assume about the hardware and how much headroom to keep. */
export interface PlanRules {
  /** The share of a core (server or database) planned busy at peak. */
  utilisation: number;
  /** Cores of one PostgreSQL instance (primary or replica). */
  databaseCores: number;
  /** PostgreSQL bytes (index rows and warm bodies) one primary may hold before the data is sharded. */
  maxBytesPerPrimary: number;
  /** Replicas per primary whatever the read load (for failover). */
  minReplicas: number;
  /** Server cores whatever the load (two processes, so one can fail). */
  minServerCores: number;
  /** How many times smaller an archived body is than its warm row less its search vector: the floor for segments, whose measured size comes from repeating texts. */
  archiveCompression: number;
  /** Cores of the box the bench ran on (server, PostgreSQL and load generator together). */
  benchCores: number;
  /** SQL statements a send runs: the send statement and the rate limiter's counter (the bench does not count them). */
  sendStatements: number;
  /** Which page scenario stands for a page read. */
  pageScenario: PageScenarioName;
}

/** Per-request costs derived from the figures, in core-seconds, and per-message bytes. */
export interface UnitCosts {
  /** Server (Node) core-seconds per page read and per send. */
  serverPerPage: number;
  serverPerSend: number;
  /** PostgreSQL core-seconds per statement of a page, per page, per send. */
  databasePerPageStatement: number;
  databasePerPage: number;
  databasePerSend: number;
  /** Sends one conversation takes at most, whatever the number of shards (its counter's row lock). */
  oneConversationSendsPerSecond: number;
  /** Bytes per message: its index row in PostgreSQL (for as long as it is kept), its body in PostgreSQL (until archived), its archived body. */
  indexRowBytes: number;
  bodyBytes: number;
  archivedBytes: number;
  /** The archived bytes per message as measured, before the compression floor. */
  measuredArchivedBytes: number;
}

export type CostsResult = { ok: true; costs: UnitCosts } | { ok: false; problem: string };

/**
 * Server core-seconds per request from one full-path rate and its raw SQL
 * twin, both measured with every core of the bench box busy: the full run
 * spent `cores / full` core-seconds per request on the server, PostgreSQL
 * and the load generator, the raw run `cores / raw` on PostgreSQL and its
 * load generator, so the difference is the server's, taking the two load
 * generators' cost per request as equal. Null when the full path was not
 * slower than raw (then the box was not the limit and this says nothing).
 */
export function serverSecondsPerRequest(full: number, raw: number, cores: number): number | null {
  const seconds = cores / full - cores / raw;
  return seconds > 0 ? seconds : null;
}

/**
 * Bytes per message from the archive row's storage: the index row (table
 * and indexes), the body in PostgreSQL (text, search vector, TOAST,
 * indexes) and the archived body. Archived: the measured segment bytes, but never less than the warm body
 * row without its search vector (`vectorBytes`, 0 when unknown) over
 * `compression`, because the bench's seeded texts repeat and compress far
 * better than chat.
 */
export function bytesPerMessage(
  hot: StorageFigure,
  archived: ArchivedFigure,
  compression: number,
  vectorBytes: number,
): Pick<UnitCosts, 'indexRowBytes' | 'bodyBytes' | 'archivedBytes' | 'measuredArchivedBytes'> {
  const measuredArchivedBytes = archived.segmentBytes / archived.archivedMessages;
  const bodyRowBytes = Math.max(0, hot.bodyTableBytes / hot.messages - vectorBytes);
  return {
    indexRowBytes: hot.indexRowBytes / hot.messages,
    bodyBytes: (hot.bodyTableBytes + hot.bodyIndexBytes) / hot.messages,
    archivedBytes: Math.max(measuredArchivedBytes, bodyRowBytes / compression),
    measuredArchivedBytes,
  };
}

/** The unit costs of `figures` under `rules`, or why they cannot be had. */
export function unitCosts(figures: Figures, rules: PlanRules): CostsResult {
  const page: PageFigure | undefined = figures.pages.scenarios.find((s) => s.scenario === rules.pageScenario);
  if (page === undefined) return { ok: false, problem: `The pages section has no scenario ${rules.pageScenario}.` };
  const send: SendFigure = figures.sends.spread;
  const serverPerPage = serverSecondsPerRequest(page.fullPerSecond, page.rawPerSecond, rules.benchCores);
  const serverPerSend = serverSecondsPerRequest(send.fullPerSecond, send.rawPerSecond, rules.benchCores);
  if (serverPerPage === null || serverPerSend === null) {
    const which = serverPerPage === null ? `page ${rules.pageScenario}` : 'send over 1,000 conversations';
    return { ok: false, problem: `The ${which} ran at least as fast through the server as raw SQL: the run says nothing of the server's cost.` };
  }
  // The raw run's cores also ran its load generator, so this is an upper bound of PostgreSQL's share.
  const databasePerPageStatement = rules.benchCores / page.rawPerSecond;
  // The send statement costs what the raw send did; the other statements (the rate limiter's counter) what a page statement does.
  const databasePerSend = rules.benchCores / send.rawPerSecond + (rules.sendStatements - 1) * databasePerPageStatement;
  return {
    ok: true,
    costs: {
      serverPerPage,
      serverPerSend,
      databasePerPageStatement,
      databasePerPage: page.statements * databasePerPageStatement,
      databasePerSend,
      oneConversationSendsPerSecond: figures.sends.hot.rawPerSecond,
      ...bytesPerMessage(figures.storage.hot, figures.storage.archived, rules.archiveCompression, figures.searchVectors?.bytesPerMessage ?? 0),
    },
  };
}

/** Requests per second: the day's mean and the peak. */
export interface Rates {
  meanPages: number;
  peakPages: number;
  meanSends: number;
  peakSends: number;
}

/** Storage at the end of one year, in bytes, and the messages stored then. */
export interface YearStorage {
  year: number;
  messages: number;
  /** Messages younger than the archive age, whole in PostgreSQL: index rows and bodies. */
  hot: number;
  /** Older messages' index rows, which stay in PostgreSQL. */
  warm: number;
  /** Older messages' bodies, in segments in a folder or bucket. */
  archived: number;
}

/** Why there is more than one primary. */
type ShardReason = 'writes' | 'storage';

/** What the target load needs. */
export interface CapacityPlan {
  rates: Rates;
  serverCores: number;
  /** Server cores the load keeps busy at peak (before utilisation and the minimum). */
  serverBusyCores: number;
  /** PostgreSQL cores busy at peak: writes (on primaries) and page reads (on replicas). */
  databaseWriteCores: number;
  databaseReadCores: number;
  primaries: number;
  /** Empty with one primary; otherwise which limits more primaries answer. */
  shardReasons: ShardReason[];
  replicasPerPrimary: number;
  replicas: number;
  /** Year by year, from the first to `years` (after which the purge keeps it level). */
  storage: YearStorage[];
  /** PostgreSQL bytes (hot and warm) of one primary, and of one replica, at the last year. */
  bytesPerPrimary: number;
}

const SECONDS_PER_DAY = 86_400;
const DAYS_PER_YEAR = 365;

/** Requests per second for `load`. */
export function ratesOf(load: TargetLoad): Rates {
  const meanPages = (load.users * load.pagesPerUser) / SECONDS_PER_DAY;
  const meanSends = (load.users * load.messagesPerUser) / SECONDS_PER_DAY;
  return { meanPages, peakPages: meanPages * load.peakFactor, meanSends, peakSends: meanSends * load.peakFactor };
}

/**
 * Storage at the end of each year up to `load.years`: messages younger
 * than `archiveAfterDays` are hot (index row and body in PostgreSQL);
 * older ones keep their index row in PostgreSQL (warm) and have their body
 * archived.
 */
export function storageByYear(load: TargetLoad, costs: Pick<UnitCosts, 'indexRowBytes' | 'bodyBytes' | 'archivedBytes'>): YearStorage[] {
  const perDay = load.users * load.messagesPerUser;
  const years: YearStorage[] = [];
  for (let year = 1; year <= Math.ceil(load.years); year++) {
    const days = Math.min(year, load.years) * DAYS_PER_YEAR;
    const young = Math.min(days, load.archiveAfterDays) * perDay;
    const old = days * perDay - young;
    years.push({
      year,
      messages: days * perDay,
      hot: young * (costs.indexRowBytes + costs.bodyBytes),
      warm: old * costs.indexRowBytes,
      archived: old * costs.archivedBytes,
    });
  }
  return years;
}

/** What `load` needs, with `costs` measured and `rules` assumed. */
export function planCapacity(load: TargetLoad, rules: PlanRules, costs: UnitCosts): CapacityPlan {
  const rates = ratesOf(load);
  const serverBusyCores = rates.peakPages * costs.serverPerPage + rates.peakSends * costs.serverPerSend;
  const serverCores = Math.max(rules.minServerCores, Math.ceil(serverBusyCores / rules.utilisation));

  // Writes go to the primaries, page reads to the replicas; each instance planned at `utilisation`.
  const instanceCores = rules.databaseCores * rules.utilisation;
  const databaseWriteCores = rates.peakSends * costs.databasePerSend;
  const databaseReadCores = rates.peakPages * costs.databasePerPage;
  const storage = storageByYear(load, costs);
  const last = storage.at(-1);
  const databaseBytes = last === undefined ? 0 : last.hot + last.warm;
  // Conversations spread evenly over primaries (hashed on conv_id), so each takes an equal share.
  const forWrites = Math.ceil(databaseWriteCores / instanceCores);
  const forStorage = Math.ceil(databaseBytes / rules.maxBytesPerPrimary);
  const primaries = Math.max(1, forWrites, forStorage);
  const shardReasons: ShardReason[] = [...(forWrites > 1 ? ['writes' as const] : []), ...(forStorage > 1 ? ['storage' as const] : [])];
  const replicasPerPrimary = Math.max(rules.minReplicas, Math.ceil(databaseReadCores / primaries / instanceCores));
  return {
    rates,
    serverCores,
    serverBusyCores,
    databaseWriteCores,
    databaseReadCores,
    primaries,
    shardReasons,
    replicasPerPrimary,
    replicas: replicasPerPrimary * primaries,
    storage,
    bytesPerPrimary: databaseBytes / primaries,
  };
}
