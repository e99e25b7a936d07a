/**
 * The purge in the server process (PURGE_INTERVAL_SECONDS): a pass at start,
 * then one every interval after the previous one ends, so two never overlap.
 * A failed pass is logged and the schedule goes on; the next pass resumes
 * where it stopped.
 */
import type { Logger } from './log.ts';

/** A running schedule. */
export interface PurgeSchedule {
  /** Stops the schedule: aborts a running pass at its next batch and resolves once it has returned. */
  stop(): Promise<void>;
}

/** Starts running `pass` now and then every `intervalSeconds`; `pass` must honour its signal. */
export function startPurgeSchedule(intervalSeconds: number, pass: (signal: AbortSignal) => Promise<unknown>, logger: Logger): PurgeSchedule {
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  const tick = () => {
    running = pass(stopping.signal)
      .then(
        () => undefined,
        (error: unknown) => logger.error({ err: error }, 'purge failed'),
      )
      .finally(() => {
        running = null;
        // unref: the schedule alone never keeps a process alive.
        if (!stopping.signal.aborted) timer = setTimeout(tick, intervalSeconds * 1000).unref();
      });
  };
  timer = setTimeout(tick, 0).unref();
  return {
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
