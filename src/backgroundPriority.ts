/**
 * Maintenance commands (`backscroll archive`, `backscroll purge`) run at a
 * lower CPU priority than the server they share a machine with, so the
 * work they do in Node (the archiver's brotli, JSON and checksums) waits
 * for the requests' work rather than taking turns with it. Their
 * statements still run in PostgreSQL at its priority: the rest ratios
 * (ARCHIVE_REST_RATIO, the purge's) pace that side.
 *
 * Linux keeps a nice value per thread, and a new thread takes its
 * creator's, so every thread the process has is lowered (libuv's pool,
 * where zlib compresses, may already have started), and the threads made
 * later inherit it.
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The nice value maintenance runs at: lower priority than the server's 0, above nothing the operator asked for. */
export const BACKGROUND_NICE = 10;

/** The ids of this process's threads: Linux's /proc; elsewhere the process alone. */
function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [process.pid];
  }
}

/**
 * Lowers this process's CPU priority to BACKGROUND_NICE, unless it already
 * runs lower (started under `nice -n 19`, say), and answers the nice value
 * it runs at. Never fails: a system that refuses leaves it as it was.
 */
export function runInBackground(): number {
  for (const id of threadIds()) {
    try {
      if (getPriority(id) < BACKGROUND_NICE) setPriority(id, BACKGROUND_NICE);
    } catch {
      // A thread that ended meanwhile, or a platform without per-thread priorities.
    }
  }
  try {
    return getPriority();
  } catch {
    return 0;
  }
}
