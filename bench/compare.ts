/**
 * `npm run bench:compare A B`: two runs' results files side by side, one
 * table per section, each figure of run A, of run B, and its change from A
 * to B in per cent (rates, latencies and ratios alike). Figures only one run
 * has show "—"; text cells (targets, "met") show only where they differ.
 *
 *   npm run bench:compare bench/results/<A>.json bench/results/<B>.json
 */
import { pathToFileURL } from 'node:url';
import { SECTIONS, type Section } from './options.ts';
import { type BenchRun, readRun } from './results.ts';
import { type Cell, markdownTable, type ResultTable } from './table.ts';

const MISSING = '—';

/** The change from `a` to `b` as a signed percentage, or '' when there is no number to compare. */
export function change(a: Cell | undefined, b: Cell | undefined): string {
  if (a?.value == null || b?.value == null) return a !== undefined && b !== undefined && a.text !== b.text ? 'changed' : '';
  if (a.value === b.value) return '0.0%';
  if (a.value === 0) return '';
  const percent = ((b.value - a.value) / Math.abs(a.value)) * 100;
  return `${percent > 0 ? '+' : ''}${percent.toFixed(1)}%`;
}

/** A run's name in the comparison: its date, commit and whether the tree had changes. */
const describeRun = (run: BenchRun) => `${run.date} at ${run.commit.slice(0, 7)}${run.dirty ? ' (with uncommitted changes)' : ''}`;

/** Items of `a` then those only in `b`, by `key`, each once. */
function union<T>(a: T[], b: T[], key: (item: T) => string): string[] {
  return [...new Set([...a.map(key), ...b.map(key)])];
}

/** The comparison rows of one table present in either run: one per figure (row and column). */
function figureRows(a: ResultTable | undefined, b: ResultTable | undefined): string[][] {
  const rows: string[][] = [];
  const columns = union((a?.header ?? []).slice(1), (b?.header ?? []).slice(1), (h) => h);
  for (const label of union(a?.rows ?? [], b?.rows ?? [], (row) => row.label)) {
    const rowA = a?.rows.find((row) => row.label === label);
    const rowB = b?.rows.find((row) => row.label === label);
    for (const column of columns) {
      const cellA = rowA?.cells[(a?.header.indexOf(column) ?? 0) - 1];
      const cellB = rowB?.cells[(b?.header.indexOf(column) ?? 0) - 1];
      if (cellA === undefined && cellB === undefined) continue;
      // Constant text (a target, an empty cell) says nothing about the change.
      if (cellA?.value == null && cellB?.value == null && cellA?.text === cellB?.text) continue;
      const name = [label, column].filter((part) => part !== '').join(': ');
      rows.push([name, cellA?.text ?? MISSING, cellB?.text ?? MISSING, change(cellA, cellB)]);
    }
  }
  return rows;
}

/** Runs `a` and `b` compared: a heading naming both, then a table per section. */
export function compareRuns(a: BenchRun, b: BenchRun): string {
  const out = [`# Benchmark comparison\n\nA: ${describeRun(a)}\nB: ${describeRun(b)}`];
  // In the order a run goes (a section only one run has, such as the server's, after them).
  const order = (name: string) => ((SECTIONS as readonly string[]).includes(name) ? SECTIONS.indexOf(name as Section) : SECTIONS.length);
  const sections = union(Object.keys(a.sections), Object.keys(b.sections), (name) => name).sort((x, y) => order(x) - order(y));
  for (const section of sections) {
    const [sectionA, sectionB] = [a.sections[section], b.sections[section]];
    if (sectionA === undefined || sectionB === undefined) {
      out.push(`## ${section}\n\nOnly run ${sectionA === undefined ? 'B' : 'A'} has this section.`);
      continue;
    }
    const rows = union(sectionA.tables, sectionB.tables, (table) => table.id).flatMap((id) =>
      figureRows(
        sectionA.tables.find((table) => table.id === id),
        sectionB.tables.find((table) => table.id === id),
      ),
    );
    out.push(`## ${section}\n\n${markdownTable(['', 'A', 'B', 'change'], rows)}`);
  }
  return `${out.join('\n\n')}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const paths = process.argv.slice(2);
  if (paths.length !== 2) {
    process.stderr.write(`npm run bench:compare takes two results files (bench/results/*.json), but got ${paths.length}: ${paths.join(' ')}\n`);
    process.exit(1);
  }
  try {
    process.stdout.write(compareRuns(readRun(paths[0]!), readRun(paths[1]!)));
  } catch (error) {
    process.stderr.write(`bench:compare: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
