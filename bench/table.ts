/**
 * The benchmark's tables: what `npm run bench` prints and what its results
 * file keeps. A cell holds the text printed and the number behind it, so
 * the JSON has every figure at full precision and `bench:compare` can
 * compute changes without parsing text back.
 */

/** One cell: the text as printed, and its number (null for text such as "yes"). */
export interface Cell {
  text: string;
  value: number | null;
}

/** One row: its label (the first column) and the other cells, in header order. */
export interface TableRow {
  label: string;
  cells: Cell[];
}

/** A table as printed: a title, the header (its first entry heads the labels), the rows. */
export interface ResultTable {
  /** Stable within its section (the title may carry settings), so two runs' tables pair up. */
  id: string;
  title: string;
  header: string[];
  rows: TableRow[];
}

/** A number printed with `digits` decimals. */
export const num = (value: number, digits = 0): Cell => ({ text: Number.isFinite(value) ? value.toFixed(digits) : String(value), value });
/** A number printed as a percentage (0.83 is "83%"). */
export const percent = (ratio: number): Cell => ({ text: `${(ratio * 100).toFixed(0)}%`, value: ratio });
/** Text with no number behind it. */
export const words = (text: string): Cell => ({ text, value: null });

/** `rows` under `header` as a Markdown table: labels left-aligned, figures right-aligned. */
export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${widths.map((w, i) => (i === 0 ? (cells[i] ?? '').padEnd(w) : (cells[i] ?? '').padStart(w))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w - 1)}:-`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A result table as Markdown, under its title. */
export function printTable(table: ResultTable): string {
  return `## ${table.title}\n\n${markdownTable(
    table.header,
    table.rows.map((row) => [row.label, ...row.cells.map((cell) => cell.text)]),
  )}`;
}
