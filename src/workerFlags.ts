/**
 * The V8 flags each server worker starts with (node:cluster forks them with
 * the primary's `execArgv` plus these).
 *
 * `--no-memory-reducer`: once a process has allocated next to nothing for
 * about 45 seconds, V8's memory reducer runs full collections that shrink
 * the heap, and they drop the optimized code of the request path with it.
 * The next requests then cost what a fresh server's first ones do: on the
 * bench data, a warm worker's newest page took 2,200-3,400 µs of server
 * CPU in the first 3 s after a 60 s pause against 1,000-1,200 before it,
 * and V8 re-optimized 870-930 functions there, against 38 with the flag
 * (README, Performance: the twenty-second session). A chat server has
 * such pauses every night and between bursts, and its first reader after
 * one pays. The cost: an idle worker keeps the heap it last needed (about
 * 90 MB reserved on the bench, against 30 after the reducer), which its
 * peak needed anyway.
 *
 * V8 reads the flag when the heap is set up, so it has to be on the command
 * line: `v8.setFlagsFromString` in the running process leaves the reducer
 * on, and NODE_OPTIONS refuses it. A single-process server gets it from
 * `npm start` (package.json) and from `npx backscroll serve` (the
 * shebang of bin/backscroll.js); `node bin/backscroll.js serve` needs it
 * written out.
 */
const WORKER_V8_FLAGS: readonly string[] = ['--no-memory-reducer'];

/** `execArgv` with every worker flag it lacks added. */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  return [...execArgv, ...WORKER_V8_FLAGS.filter((flag) => !execArgv.includes(flag))];
}
