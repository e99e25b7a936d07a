/**
 * The in-process purge schedule, on vitest's fake clock: passes and
 * intervals of minutes run in no time, and each test reads exactly when
 * every pass started and ended.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { startPurgeSchedule } from '../../src/purgeSchedule.ts';

const silent = createLogger('silent');
const SECOND = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('The purge schedule', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs a pass at once and then one interval after each pass ends, never two at once', async () => {
    const passes: { start: number; end?: number }[] = [];
    const schedule = startPurgeSchedule(
      60,
      async () => {
        const pass: { start: number; end?: number } = { start: Date.now() };
        passes.push(pass);
        await sleep(30 * SECOND);
        pass.end = Date.now();
      },
      silent,
    );
    await vi.advanceTimersByTimeAsync(200 * SECOND);
    const stopped = schedule.stop();
    await vi.advanceTimersByTimeAsync(30 * SECOND);
    await stopped;
    expect(passes).toEqual([
      { start: 0, end: 30 * SECOND },
      { start: 90 * SECOND, end: 120 * SECOND },
      { start: 180 * SECOND, end: 210 * SECOND },
    ]);
  });

  it('logs a failed pass and runs the next one an interval later', async () => {
    const errors: unknown[] = [];
    const logger = { error: (fields: unknown) => errors.push(fields) } as unknown as typeof silent;
    const starts: number[] = [];
    const schedule = startPurgeSchedule(
      60,
      async () => {
        starts.push(Date.now());
        if (starts.length === 1) throw new Error('the database is down');
      },
      logger,
    );
    await vi.advanceTimersByTimeAsync(60 * SECOND);
    await schedule.stop();
    expect({ starts, errors }).toEqual({ starts: [0, 60 * SECOND], errors: [{ err: new Error('the database is down') }] });
  });

  it('on stop, aborts the running pass and resolves only once it has returned', async () => {
    const steps: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const schedule = startPurgeSchedule(
      3600,
      async (signal) => {
        steps.push('started');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        steps.push('aborted');
        await released;
        steps.push('returned');
      },
      silent,
    );
    await vi.advanceTimersByTimeAsync(0);
    const stopped = schedule.stop().then(() => steps.push('stopped'));
    // The pass has seen the abort, and stop still waits for it to return.
    await vi.waitFor(() => expect(steps).toEqual(['started', 'aborted']));
    release();
    await stopped;
    expect(steps).toEqual(['started', 'aborted', 'returned', 'stopped']);
  });

  it('starts no pass after it is stopped, even when stopped during a pass', async () => {
    let passes = 0;
    const schedule = startPurgeSchedule(
      60,
      async () => {
        passes += 1;
        await sleep(30 * SECOND);
      },
      silent,
    );
    await vi.advanceTimersByTimeAsync(10 * SECOND);
    const stopped = schedule.stop();
    await vi.advanceTimersByTimeAsync(20 * SECOND);
    await stopped;
    await vi.advanceTimersByTimeAsync(600 * SECOND);
    expect(passes).toBe(1);
  });
});
