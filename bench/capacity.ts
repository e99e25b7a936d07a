/**
 * `npm run capacity`: what a target load needs (server cores, PostgreSQL
 * primaries and replicas, storage by year), from the newest benchmark
 * results in bench/results/ (each section from the newest file that has
 * it), or from the committed reference (bench/capacityReference.json,
 * copied from a real results file) for what no file there has. The
 * arithmetic is bench/capacity/model.ts; this file reads and prints.
 *
 *   npm run capacity -- --users 1000000 --messages-per-user 40 --pages-per-user 60 --years 3 --archive-after-days 90 --peak-factor 3
 *   npm run capacity -- --results bench/results/<file>.json
 *   npm run capacity -- --save-reference     copy the figures used into the reference file
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gatherFigures, type NamedRun, referenceRuns } from './capacity/figures.ts';
import { planCapacity, unitCosts } from './capacity/model.ts';
import { parseCapacityArgs } from './capacity/options.ts';
import { capacityReport } from './capacity/report.ts';
import { readRun } from './results.ts';

const RESULTS_DIR = 'bench/results';
const REFERENCE = 'bench/capacityReference.json';

/** A run in the reference file: what it holds, and where its figures come from. */
interface ReferenceRun extends NamedRun {
  about?: string;
}

/** The committed reference file: runs (only the sections the model reads) copied from real results files. */
interface Reference {
  about: string;
  runs: ReferenceRun[];
}

function fail(problem: string): never {
  process.stderr.write(`capacity: ${problem}\n`);
  process.exit(1);
}

const parsed = parseCapacityArgs(process.argv.slice(2));
if (!parsed.ok) fail(parsed.problem);
const { load, rules, results, saveReference } = parsed.options;

/** The results files to read, newest first: the one named, or every file in bench/results/ (names start with the run's date). */
function resultFiles(): string[] {
  if (results !== null) return [results];
  try {
    return readdirSync(RESULTS_DIR)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .reverse()
      .map((name) => join(RESULTS_DIR, name));
  } catch {
    return [];
  }
}

const notes: string[] = [];
const measured: NamedRun[] = [];
for (const file of resultFiles()) {
  try {
    measured.push({ file, run: readRun(file) });
  } catch (error) {
    if (results !== null) fail((error as Error).message);
    notes.push(`skipped ${file}: ${(error as Error).message}`);
  }
}
/** The committed reference's runs; none when the file is missing (a checkout that never saved one). */
function referenceRunsOnDisk(): ReferenceRun[] {
  let text: string;
  try {
    text = readFileSync(REFERENCE, 'utf8');
  } catch {
    return [];
  }
  return (JSON.parse(text) as Reference).runs;
}

// Reference runs keep the name of the file they were copied from; the output says where they are now.
const fromReference = referenceRunsOnDisk().map((entry) => ({ file: `${REFERENCE}: ${entry.file}`, run: entry.run, entry }));
const gathered = gatherFigures([...measured, ...fromReference]);
if (!gathered.ok) fail(gathered.problem);
const { figures } = gathered;
const sources = [figures.pages.source, figures.sends.source, figures.storage.source, figures.memory?.source, figures.searchVectors?.source];
if (sources.some((s) => s?.file.startsWith(REFERENCE))) {
  notes.push(
    measured.length === 0
      ? `no results in ${RESULTS_DIR}/ (run \`npm run bench\`): every figure is the committed reference's`
      : `the sections no file in ${results ?? `${RESULTS_DIR}/`} has are the committed reference's`,
  );
}

const costs = unitCosts(figures, rules);
if (!costs.ok) fail(costs.problem);
const plan = planCapacity(load, rules, costs.costs);
process.stdout.write(`${capacityReport(load, rules, figures, costs.costs, plan, notes)}\n`);

if (saveReference) {
  const runs = referenceRuns([...measured, ...fromReference], figures).map(({ file, run }): ReferenceRun => {
    const kept = fromReference.find((r) => r.file === file)?.entry;
    return kept === undefined
      ? { file: join(RESULTS_DIR, basename(file)), about: `Copied from this results file by \`npm run capacity -- --save-reference\`.`, run }
      : { ...kept, run };
  });
  const about =
    "The figures `npm run capacity` uses for what no file in bench/results/ has: the sections it reads, as `npm run capacity -- --save-reference` copied them from the results named (each run's commit, date and settings are its own; `about` says where each came from).";
  writeFileSync(REFERENCE, `${JSON.stringify({ about, runs } satisfies Reference, null, 2)}\n`);
  process.stderr.write(`capacity: wrote the figures used into ${REFERENCE}\n`);
}
