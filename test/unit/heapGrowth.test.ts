/**
 * A server process caps how far its heap grows past the live data
 * (src/heapGrowth.ts). Measured in child processes, each with the same
 * allocation: a live set that stays, and a stream of objects that live long
 * enough to be promoted and then die, as a request's do under load.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Prints the largest heap the process reserved while churning, in MB. */
const CHILD = `
import { limitHeapGrowth } from './src/heapGrowth.ts';
limitHeapGrowth(Number(process.env.PERCENT));
const live = Array.from({ length: 300_000 }, (_, i) => ({ i, s: 'live ' + i }));
const recent = new Array(200_000);
let peak = 0;
for (let i = 0; i < 4_000_000; i++) {
  recent[i % recent.length] = { i, pair: [i, i + 1], s: 'recent ' + i };
  if (i % 10_000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
}
console.log(JSON.stringify({ peakMb: peak / 1048576, live: live.length }));
`;

async function peakHeapMb(percent: number): Promise<number> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    cwd: process.cwd(),
    env: { ...process.env, PERCENT: String(percent) },
  });
  return (JSON.parse(stdout) as { peakMb: number }).peakMb;
}

describe('Heap growth', () => {
  it('reserves a smaller heap for the same work at a lower HEAP_GROWTH_PERCENT', async () => {
    const [tight, loose] = await Promise.all([peakHeapMb(20), peakHeapMb(300)]);
    // Growth past the live data is 0.2 against 3 times it: the tight heap is well under two thirds of the loose one.
    expect(tight).toBeLessThan(loose * 0.66);
  });
});
