/**
 * The command line of `npm run capacity`: the target load, the planning
 * rules and which results to read. Pure, so it is tested without files.
 *
 *   npm run capacity -- --users 1000000 --messages-per-user 40 --pages-per-user 60 --years 3 --archive-after-days 90 --peak-factor 3
 */
import { parseArgs } from 'node:util';
import { PAGE_SCENARIOS, type PageScenarioName } from './figures.ts';
import type { PlanRules, TargetLoad } from './model.ts';

/** What one run of `npm run capacity` computes, from which results. */
export interface CapacityOptions {
  load: TargetLoad;
  rules: PlanRules;
  /** A results file to read first; null: the newest of bench/results/. */
  results: string | null;
  /** Write the figures used into the committed reference file. */
  saveReference: boolean;
}

const TB = 1e12;

/** A numeric flag: its name, default, the lowest value allowed (and whether that bound is open), and whether it must be whole. */
interface NumberFlag {
  flag: string;
  fallback: number;
  min: number;
  above?: boolean;
  max?: number;
  whole?: boolean;
  meaning: string;
}

const NUMBERS = {
  users: { flag: 'users', fallback: 1_000_000, min: 1, whole: true, meaning: 'daily active users' },
  messagesPerUser: { flag: 'messages-per-user', fallback: 40, min: 0, meaning: 'messages each user sends a day' },
  pagesPerUser: { flag: 'pages-per-user', fallback: 60, min: 0, meaning: 'pages of 50 messages each user reads a day' },
  years: { flag: 'years', fallback: 3, min: 0, above: true, meaning: 'years messages are kept' },
  archiveAfterDays: { flag: 'archive-after-days', fallback: 90, min: 0, meaning: 'age in days at which bodies are archived' },
  peakFactor: { flag: 'peak-factor', fallback: 3, min: 1, meaning: "the peak second's rate over the day's mean" },
  utilisation: { flag: 'utilisation', fallback: 0.6, min: 0, above: true, max: 1, meaning: 'share of each core planned busy at peak' },
  databaseCores: { flag: 'db-cores', fallback: 16, min: 1, whole: true, meaning: 'cores of one PostgreSQL instance' },
  maxTbPerPrimary: { flag: 'max-db-tb', fallback: 2, min: 0, above: true, meaning: 'PostgreSQL TB one primary may hold before sharding' },
  minReplicas: { flag: 'min-replicas', fallback: 1, min: 0, whole: true, meaning: 'replicas per primary whatever the reads' },
  archiveCompression: { flag: 'archive-compression', fallback: 4, min: 1, meaning: 'warm body row bytes over archived bytes, at the least' },
  benchCores: { flag: 'bench-cores', fallback: 2, min: 1, whole: true, meaning: 'cores of the box the bench ran on' },
} satisfies Record<string, NumberFlag>;

/** Server cores and statements per send are rules of this code, not flags. */
const MIN_SERVER_CORES = 2;
const SEND_STATEMENTS = 2;

/** The usage line, with every flag and its default. */
const CAPACITY_USAGE = `Usage: npm run capacity -- ${Object.values(NUMBERS)
  .map((n) => `[--${n.flag} ${n.fallback}]`)
  .join(' ')} [--page-scenario ${PAGE_SCENARIOS.join('|')}] [--results <file>] [--save-reference]`;

/** `text` as a number, allowing 1,000,000 and 1_000_000; NaN otherwise. */
const numberOf = (text: string): number => (/^[\d.,_eE+-]+$/.test(text) ? Number(text.replaceAll(/[,_]/g, '')) : Number.NaN);

/** The problem with `value` for `spec`, or null. */
function numberProblem(spec: NumberFlag, text: string, value: number): string | null {
  const range = `${spec.above ? 'above' : 'at least'} ${spec.min}${spec.max === undefined ? '' : ` and at most ${spec.max}`}`;
  const ok =
    Number.isFinite(value) && (spec.above ? value > spec.min : value >= spec.min) && (spec.max === undefined || value <= spec.max) && (!spec.whole || Number.isInteger(value));
  return ok ? null : `--${spec.flag} (${spec.meaning}) must be ${spec.whole ? 'a whole number ' : 'a number '}${range}, got ${JSON.stringify(text)}.`;
}

/** The options of `argv` (the arguments after the script), or what is wrong with them. */
export function parseCapacityArgs(argv: string[]): { ok: true; options: CapacityOptions } | { ok: false; problem: string } {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        ...Object.fromEntries(Object.values(NUMBERS).map((n) => [n.flag, { type: 'string' as const }])),
        'page-scenario': { type: 'string' },
        results: { type: 'string' },
        'save-reference': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { ok: false, problem: `${(error as Error).message}. ${CAPACITY_USAGE}` };
  }
  const numbers = {} as Record<keyof typeof NUMBERS, number>;
  for (const [key, spec] of Object.entries(NUMBERS) as [keyof typeof NUMBERS, NumberFlag][]) {
    const text = values[spec.flag];
    if (typeof text !== 'string') {
      numbers[key] = spec.fallback;
      continue;
    }
    const value = numberOf(text);
    const problem = numberProblem(spec, text, value);
    if (problem !== null) return { ok: false, problem };
    numbers[key] = value;
  }
  const scenario = values['page-scenario'] ?? 'random-newest';
  if (!(PAGE_SCENARIOS as readonly unknown[]).includes(scenario)) {
    return { ok: false, problem: `--page-scenario must be one of ${PAGE_SCENARIOS.join(', ')}, got ${JSON.stringify(scenario)}.` };
  }
  return {
    ok: true,
    options: {
      load: {
        users: numbers.users,
        messagesPerUser: numbers.messagesPerUser,
        pagesPerUser: numbers.pagesPerUser,
        years: numbers.years,
        archiveAfterDays: numbers.archiveAfterDays,
        peakFactor: numbers.peakFactor,
      },
      rules: {
        utilisation: numbers.utilisation,
        databaseCores: numbers.databaseCores,
        maxBytesPerPrimary: numbers.maxTbPerPrimary * TB,
        minReplicas: numbers.minReplicas,
        minServerCores: MIN_SERVER_CORES,
        archiveCompression: numbers.archiveCompression,
        benchCores: numbers.benchCores,
        sendStatements: SEND_STATEMENTS,
        pageScenario: scenario as PageScenarioName,
      },
      results: typeof values.results === 'string' ? values.results : null,
      saveReference: values['save-reference'] === true,
    },
  };
}
