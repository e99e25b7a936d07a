/**
 * What `npm run capacity` prints: the load, what it needs, storage by
 * year, every assumption with the figure behind it, and where each figure
 * came from. Pure: text from the plan.
 */
import { markdownTable } from '../table.ts';
import { type FigureSource, type Figures, PAGE_SCENARIOS, type PageScenarioName } from './figures.ts';
import { type CapacityPlan, type PlanRules, serverSecondsPerRequest, type TargetLoad, type UnitCosts } from './model.ts';

/** The bench's label of each page scenario. */
const SCENARIO_LABELS: Record<PageScenarioName, string> = {
  'random-newest': '(a) newest page, random conversations',
  'hot-newest': '(b) newest page, hot conversation',
  'hot-deep': '(c) 400,000 deep via before:',
  'hot-around': '(d) messagesAround 400,000 deep',
};

/** `value` with thousands separators and `digits` decimals. */
export const count = (value: number, digits = 0): string =>
  value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Bytes in decimal units (GB = 10^9 bytes), three significant figures at most. */
export function bytes(value: number): string {
  const units: [number, string][] = [
    [1e15, 'PB'],
    [1e12, 'TB'],
    [1e9, 'GB'],
    [1e6, 'MB'],
    [1e3, 'kB'],
  ];
  const [size, unit] = units.find(([s]) => value >= s) ?? [1, 'B'];
  if (unit === 'B') return `${count(value)} B`;
  const scaled = value / size;
  return `${count(scaled, scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2)} ${unit}`;
}

/** A figure the user gave: whole numbers bare, others with up to two decimals. */
const plain = (value: number): string => value.toLocaleString('en', { maximumFractionDigits: 2 });
/** Cores busy: two decimals under one, so a small load does not read as none. */
const cores = (value: number): string => count(value, value < 1 ? 2 : 1);
const ms = (seconds: number): string => `${count(seconds * 1000, 3)} ms`;
const perSecond = (seconds: number): string => count(1 / seconds);
const describeSource = (s: FigureSource): string =>
  `${s.file} (run of ${s.date} at ${s.commit.slice(0, 7)}${s.dirty ? ' with uncommitted changes' : ''}, ${s.seconds} s per load run, ${s.workers} server processes)`;

/** The load in one sentence. */
function loadLine(load: TargetLoad): string {
  return (
    `${count(load.users)} daily active users, each sending ${plain(load.messagesPerUser)} messages and reading ` +
    `${plain(load.pagesPerUser)} pages of 50 a day; messages kept ${plain(load.years)} years, ` +
    `bodies archived after ${plain(load.archiveAfterDays)} days; peak ${plain(load.peakFactor)} × the day's mean.`
  );
}

/** The plan as printed: headings, tables and the assumptions. */
export function capacityReport(load: TargetLoad, rules: PlanRules, figures: Figures, costs: UnitCosts, plan: CapacityPlan, notes: string[] = []): string {
  const { rates } = plan;
  const pct = `${count(rules.utilisation * 100)}%`;
  const instance = rules.databaseCores * rules.utilisation;
  const last = plan.storage.at(-1)!;
  const memory =
    figures.memory === null
      ? 'not recorded'
      : `${count(plan.serverCores)} × ${count(figures.memory.workerPeakMb)} MB = ${bytes(plan.serverCores * figures.memory.workerPeakMb * 2 ** 20)}`;
  const shard =
    plan.shardReasons.length === 0
      ? 'one primary holds it'
      : `sharded on conv_id for ${plan.shardReasons.map((r) => (r === 'writes' ? 'the writes' : 'the storage')).join(' and ')}`;

  const needs = markdownTable(
    ['', 'needed'],
    [
      ['server cores', count(plan.serverCores)],
      ['server memory', memory],
      [`PostgreSQL primaries (${rules.databaseCores} cores)`, count(plan.primaries)],
      [`PostgreSQL replicas (${rules.databaseCores} cores)`, `${count(plan.replicas)} (${count(plan.replicasPerPrimary)} per primary)`],
      ['PostgreSQL bytes per instance', bytes(plan.bytesPerPrimary)],
      ['PostgreSQL bytes, every instance', bytes(plan.bytesPerPrimary * (plan.primaries + plan.replicas))],
      ['archive segments (bucket or folder)', bytes(last.archived)],
    ],
  );
  const because = [
    `Server cores: ${count(rates.peakPages)} pages/s × ${ms(costs.serverPerPage)} + ${count(rates.peakSends)} sends/s × ${ms(costs.serverPerSend)} = ${cores(plan.serverBusyCores)} cores busy at peak, planned at ${pct} (at least ${rules.minServerCores}); memory: one process per core, each at the largest worker peak RSS the bench saw.`,
    `Primaries: writes keep ${cores(plan.databaseWriteCores)} cores busy at peak (${count(instance, 1)} per primary at ${pct}); PostgreSQL holds ${bytes(last.hot + last.warm)} at year ${plain(load.years)} (${bytes(rules.maxBytesPerPrimary)} per primary at most): ${shard}.`,
    `Replicas: page reads keep ${cores(plan.databaseReadCores)} cores busy at peak (${count(instance, 1)} per replica at ${pct}); at least ${rules.minReplicas} per primary. Each primary and each of its replicas holds ${bytes(plan.bytesPerPrimary)}.`,
  ];

  const age = `${plain(load.archiveAfterDays)} days`;
  const storage = markdownTable(
    [
      'end of year',
      'messages',
      `hot: under ${age}, whole in PostgreSQL`,
      `warm: older, index rows in PostgreSQL`,
      'archived: older, bodies in segments',
      'PostgreSQL',
      'added this year',
    ],
    plan.storage.map((y, i) => {
      const before = i === 0 ? 0 : plan.storage[i - 1]!.hot + plan.storage[i - 1]!.warm + plan.storage[i - 1]!.archived;
      return [String(y.year), count(y.messages), bytes(y.hot), bytes(y.warm), bytes(y.archived), bytes(y.hot + y.warm), bytes(y.hot + y.warm + y.archived - before)];
    }),
  );

  const page = figures.pages.scenarios.find((s) => s.scenario === rules.pageScenario)!;
  const spread = figures.sends.spread;
  const perScenario = PAGE_SCENARIOS.map((scenario) => {
    const f = figures.pages.scenarios.find((s) => s.scenario === scenario)!;
    const server = serverSecondsPerRequest(f.fullPerSecond, f.rawPerSecond, rules.benchCores);
    return `${scenario} ${server === null ? 'not derivable' : perSecond(server)}`;
  }).join(', ');
  const storageFigures = figures.storage;
  const vectorBytes = figures.searchVectors?.bytesPerMessage ?? 0;
  const bodyRow = Math.max(0, storageFigures.hot.bodyTableBytes / storageFigures.hot.messages - vectorBytes);
  const bodyTable = storageFigures.hot.bodyTableBytes / storageFigures.hot.messages;
  const bodyRowText =
    figures.searchVectors === null
      ? `${count(bodyRow)} bytes, search vector included: no run measured it`
      : `${count(bodyTable)} bytes less its ${count(vectorBytes)} of search vector, which is not archived: ${count(bodyRow)}`;
  const assumptions = [
    `A page read is the bench's ${SCENARIO_LABELS[rules.pageScenario]} (\`--page-scenario\`): ${count(page.fullPerSecond)} req/s through GraphQL, ${count(page.rawPerSecond)} as raw SQL, ${count(page.statements)} SQL statement(s) each.`,
    `Server cost per request: the bench box's ${rules.benchCores} cores (\`--bench-cores\`) ran the server, PostgreSQL and the load generator at once. With every core busy, the full run spent ${rules.benchCores} / full rate core-seconds per request on all three, the raw run ${rules.benchCores} / raw rate on PostgreSQL and its own load generator; the difference is the server's, taking both load generators to cost the same per request. Page: ${rules.benchCores} / ${count(page.fullPerSecond)} − ${rules.benchCores} / ${count(page.rawPerSecond)} = ${ms(costs.serverPerPage)}, ${perSecond(costs.serverPerPage)} pages/s per server core (by scenario: ${perScenario}). Send (1,000 conversations, ${count(spread.fullPerSecond)} msg/s, raw ${count(spread.rawPerSecond)}): ${ms(costs.serverPerSend)}, ${perSecond(costs.serverPerSend)} sends/s per core.`,
    `PostgreSQL cost: a statement of a page costs what the raw page did, ${rules.benchCores} / ${count(page.rawPerSecond)} = ${ms(costs.databasePerPageStatement)} of a core (an upper bound: the raw run's cores also ran its load generator), so ${ms(costs.databasePerPage)} per page; a send ${ms(costs.databasePerSend)}: its send statement what the raw send did (${rules.benchCores} / ${count(spread.rawPerSecond)}) and ${rules.sendStatements - 1} more statement(s) (the rate limiter's counter; the bench does not count a send's statements) what a page statement does. One ${rules.databaseCores}-core instance at ${pct} takes ${count(instance / costs.databasePerPage)} pages/s or ${count(instance / costs.databasePerSend)} sends/s: PostgreSQL assumed to scale linearly from the bench's ${rules.benchCores} cores to ${rules.databaseCores} (\`--db-cores\`, not measured).`,
    `Writes go to the primaries and page reads to replicas; replicas also replay every write, which is not counted (PostgreSQL 15 replays with one process per replica, a limit on writes per primary not measured here).`,
    `Shard (more primaries, hashed on conv_id, conversations spread evenly) when peak writes need more than one primary's cores at ${pct}, or PostgreSQL bytes pass ${bytes(rules.maxBytesPerPrimary)} per primary (\`--max-db-tb\`: what one primary can back up, restore and copy to a new replica in hours). One conversation takes at most ${count(costs.oneConversationSendsPerSecond)} sends/s (the raw send into one conversation: its counter's row lock) whatever the number of primaries.`,
    `Peak: ${plain(load.peakFactor)} × the day's mean for page reads and sends at once (\`--peak-factor\`); cores planned busy at most ${pct} at peak (\`--utilisation\`).`,
    `Bytes per message, from the archive row's data set (${count(storageFigures.hot.messages)} messages): hot ${count(costs.indexRowBytes + costs.bodyBytes)}, the index row (\`messages\` and its indexes: ${count(costs.indexRowBytes)}, in PostgreSQL for as long as the message is kept) and the body (\`message_bodies\`: text, search vector, TOAST and indexes with the GIN: ${count(costs.bodyBytes)}); warm ${count(costs.indexRowBytes)}, the index row alone; archived ${count(costs.archivedBytes)} in segments: the larger of the measured segment bytes (${count(costs.measuredArchivedBytes, 1)}, from the bench's repeating seeded texts, which compress far better than chat) and the body row (${bodyRowText}) / ${plain(rules.archiveCompression)} (\`--archive-compression\`).`,
    `Not counted: the other tables (members, conversations, the change feed, reactions, receipts, hides), WAL, bloat and free space, backups and replicas' copies of the archive (segments are stored once, in a bucket or folder); each conversation's newest ${count(200)} messages stay warm whatever their age (ARCHIVE_KEEP_NEWEST), so quiet conversations keep more warm than this says; and any load but page reads and sends (inbox, search, live events, read marks).`,
    `The figures are as good as the runs: a run on a box shared with other work, or with short load runs, understates what a core does (each source below says its settings).`,
  ];

  return [
    `# Capacity for ${count(load.users)} daily active users`,
    loadLine(load),
    markdownTable(
      ['', "day's mean /s", 'peak /s'],
      [
        ['page reads', count(rates.meanPages), count(rates.peakPages)],
        ['sends', count(rates.meanSends), count(rates.peakSends)],
      ],
    ),
    needs,
    because.map((b) => `- ${b}`).join('\n'),
    `Storage (GB = 10^9 bytes; after year ${plain(load.years)} the purge keeps it level):`,
    storage,
    'Assumptions:',
    assumptions.map((a) => `- ${a}`).join('\n'),
    'Figures from:',
    [
      `- pages: ${describeSource(figures.pages.source)}`,
      `- sends: ${describeSource(figures.sends.source)}`,
      `- storage: ${describeSource(figures.storage.source)}`,
      ...(figures.memory === null ? [] : [`- memory: ${describeSource(figures.memory.source)}`]),
      ...(figures.searchVectors === null ? [] : [`- search vectors: ${describeSource(figures.searchVectors.source)}`]),
      ...notes.map((n) => `- ${n}`),
    ].join('\n'),
  ].join('\n\n');
}
