/**
 * Maintenance commands lower their CPU priority (src/backgroundPriority.ts):
 * in a child process, so the test runner's own priority is left alone.
 * Linux keeps a nice value per thread, so every thread is read from /proc.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BACKGROUND_NICE } from '../../src/backgroundPriority.ts';

const run = promisify(execFile);

/** Starts a thread (libuv's pool, through zlib) before and after lowering, and prints every thread's nice value. */
const CHILD = `
import { readdirSync, readFileSync } from 'node:fs';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { runInBackground } from './src/backgroundPriority.ts';
const nices = () => readdirSync('/proc/self/task').map((t) => Number(readFileSync('/proc/self/task/' + t + '/stat', 'utf8').split(') ')[1].split(' ')[16]));
await promisify(gzip)(Buffer.alloc(1000));
const before = nices();
const answered = runInBackground();
await Promise.all(Array.from({ length: 8 }, () => promisify(gzip)(Buffer.alloc(100000))));
console.log(JSON.stringify({ before, answered, after: nices() }));
`;

async function child(command: string[]): Promise<{ before: number[]; answered: number; after: number[] }> {
  const { stdout } = await run(command[0]!, [...command.slice(1), process.execPath, '--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: process.cwd() });
  return JSON.parse(stdout);
}

describe.runIf(process.platform === 'linux')('Maintenance at a lower CPU priority', () => {
  it('lowers every thread of the process, those started before and after, to the background nice value', async () => {
    const { before, answered, after } = await child(['env']);
    expect(before.length).toBeGreaterThan(1);
    expect(new Set(before)).toEqual(new Set([0]));
    expect(answered).toBe(BACKGROUND_NICE);
    expect(after.length).toBeGreaterThanOrEqual(before.length);
    expect(new Set(after)).toEqual(new Set([BACKGROUND_NICE]));
  });

  it('leaves a process that already runs lower where it is', async () => {
    const { answered, after } = await child(['nice', '-n', '15']);
    expect(answered).toBe(15);
    expect(new Set(after)).toEqual(new Set([15]));
  });
});
