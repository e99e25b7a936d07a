/**
 * A benchmark run as a file: `bench/results/<date>-<commit>.json` (ignored
 * by git), holding every figure the run printed (its tables, cell by cell),
 * the measurements behind them, and what was measured: the commit, whether
 * the working tree had changes, the date and the settings.
 * `npm run bench:compare A B` reads two of them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultTable } from './table.ts';

/** What one section of a run measured: its tables as printed, lines under them, and the raw measurements. */
export interface SectionResult {
  tables: ResultTable[];
  notes: string[];
  measurements: unknown;
}

/** One run of `npm run bench`. */
export interface BenchRun {
  /** The commit measured (`git rev-parse HEAD`), and whether tracked files differed from it. */
  commit: string;
  dirty: boolean;
  /** When the run started, ISO 8601. */
  date: string;
  settings: { seconds: number; workers: number; sections: string[] };
  /** By section name (pages, sends, purge, fanout, search, server), in the order they ran. */
  sections: Record<string, SectionResult>;
}

/** The folder results go to. */
const RESULTS_DIR = 'bench/results';

/** The commit checked out, and whether tracked files have changes; "unknown" outside a git work tree. */
export function gitState(): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const changes = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim();
    return { commit, dirty: changes !== '' };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

/** The file name of `run`: its date (sortable, no colons) and short commit. */
export function resultFileName(run: BenchRun): string {
  return `${run.date.replaceAll(':', '-').replace(/\.\d+Z$/, 'Z')}-${run.commit.slice(0, 7)}${run.dirty ? '-dirty' : ''}.json`;
}

/** Writes `run` into `dir`; answers the file's path. */
export function writeRun(run: BenchRun, dir = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, resultFileName(run));
  writeFileSync(path, `${JSON.stringify(run, null, 2)}\n`);
  return path;
}

/** Reads a run written by `writeRun`, refusing a file that is not one. */
export function readRun(path: string): BenchRun {
  const run = JSON.parse(readFileSync(path, 'utf8')) as Partial<BenchRun>;
  if (typeof run.commit !== 'string' || typeof run.date !== 'string' || typeof run.sections !== 'object' || run.sections === null) {
    throw new Error(`${path} is not a benchmark result (it needs commit, date and sections).`);
  }
  return run as BenchRun;
}
