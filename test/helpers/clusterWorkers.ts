/**
 * The worker processes of a `serve` started with BACKSCROLL_WORKERS above 1,
 * read from Linux's /proc: which processes they are, and each one's slot.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The worker processes of the primary `parent`: its children running backscroll (tsx may have an esbuild child too). */
export function workersOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so split after the last `)`.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== parent) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('bin/backscroll.js')) children.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return children;
}

/** The slot the primary gave worker `pid` (BACKSCROLL_WORKER_SLOT in its environment, src/workers.ts). */
export function slotOf(pid: number): number {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((variable) => variable.startsWith('BACKSCROLL_WORKER_SLOT='));
  if (entry === undefined) throw new Error(`process ${pid} has no BACKSCROLL_WORKER_SLOT`);
  return Number(entry.slice(entry.indexOf('=') + 1));
}
