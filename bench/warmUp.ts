/**
 * Warming the server under test until it is warm, not for a fixed time.
 *
 * A fresh server process spends its first seconds running unoptimised
 * code: V8 compiles the request path with TurboFan only after thousands
 * of requests per process, on background threads whose CPU counts as the
 * server's. In the bench (2 workers, 10 connections, 3 s slices of the hot
 * newest page) the server's CPU per request went 3,113, 2,114, 1,684,
 * 1,343, 1,199, 1,321 µs, still falling after 18 s. The bench used to
 * warm up for one 3 s slice, so the first scenario measured, (a), ran on
 * a server still compiling and paid for it alone: measured twice in a row
 * after those 18 s, (a) came out at 0.25 of raw, then 0.32.
 *
 * The warm-up reads the hot conversation as its one user, so the users and
 * conversations of (a) stay cold: their first token verification and their
 * first page are still measured, as issue 15 asks.
 */

/** One warm-up slice: how fast the server answered and the CPU it spent per request. */
export interface WarmUpSlice {
  perSecond: number;
  serverMicrosPerRequest: number;
}

/** How long one warm-up slice runs, in seconds. */
export const WARM_UP_SECONDS = 3;

/** The fewest and most slices a warm-up runs. */
export const WARM_UP_SLICES = { min: 6, max: 15 } as const;

/** How much cheaper the last two slices must be than the two before them for the server to count as still warming. */
const STILL_IMPROVING = 0.05;

const meanCost = (slices: readonly WarmUpSlice[]): number => slices.reduce((sum, slice) => sum + slice.serverMicrosPerRequest, 0) / slices.length;

/**
 * Whether the server is warm after `slices`: at least the minimum ran and
 * the last two slices cost no more than 5% less per request than the two
 * before them (pairs, as one 3 s slice moves by 10% on a busy box), or the
 * maximum ran.
 */
export function warmedUp(slices: readonly WarmUpSlice[]): boolean {
  if (slices.length >= WARM_UP_SLICES.max) return true;
  if (slices.length < WARM_UP_SLICES.min) return false;
  return meanCost(slices.slice(-2)) >= meanCost(slices.slice(-4, -2)) * (1 - STILL_IMPROVING);
}
