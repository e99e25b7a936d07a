/**
 * Turning `messages(first, after, last, before)` arguments into one page
 * window, or a refusal that names the argument at fault. Pure: the caller has
 * already decoded cursors to seqs.
 */

/** Page sizes: a default for a bare request and a hard maximum (never clamped). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/**
 * A keyset window. `forward`: the `size` oldest visible messages with seq
 * greater than `afterSeq` (0 = from the start). `backward`: the `size` newest
 * with seq less than `beforeSeq` (null = from the newest).
 */
export type PageWindow =
  | { direction: 'forward'; size: number; afterSeq: number }
  | { direction: 'backward'; size: number; beforeSeq: number | null };

/** The page arguments as the client sent them, cursors already decoded to seqs. */
export interface PageArgs {
  first?: number | null;
  last?: number | null;
  afterSeq?: number | null;
  beforeSeq?: number | null;
}

/** A refusal: which argument is wrong and a sentence saying why. */
export interface ArgumentProblem {
  argumentName: string;
  message: string;
}

export type WindowResult = { ok: true; window: PageWindow } | { ok: false; problem: ArgumentProblem };

const given = (value: number | null | undefined): value is number => value !== null && value !== undefined;

/** Checks that a page size is an integer from 1 to MAX_PAGE_SIZE. */
export function checkPageSize(argumentName: string, value: number): ArgumentProblem | null {
  if (Number.isInteger(value) && value >= 1 && value <= MAX_PAGE_SIZE) return null;
  return {
    argumentName,
    message: `Argument \`${argumentName}\` must be between 1 and ${MAX_PAGE_SIZE}, got ${value}.`,
  };
}

/** Resolves the arguments of `messages` into a window, or says which argument is wrong. */
export function pageWindow(args: PageArgs): WindowResult {
  const { first, last, afterSeq, beforeSeq } = args;
  const refuse = (argumentName: string, message: string): WindowResult => ({
    ok: false,
    problem: { argumentName, message },
  });
  if (given(first) && given(last)) {
    return refuse('last', 'Arguments `first` and `last` cannot be used together; page one way at a time.');
  }
  if (given(afterSeq) && given(beforeSeq)) {
    return refuse('before', 'Arguments `after` and `before` cannot be used together; page one way at a time.');
  }
  if (given(first) && given(beforeSeq)) {
    return refuse('before', 'Argument `before` pages backward and goes with `last`, not `first`.');
  }
  if (given(last) && given(afterSeq)) {
    return refuse('after', 'Argument `after` pages forward and goes with `first`, not `last`.');
  }
  const sizeArgument = given(first) ? 'first' : given(last) ? 'last' : null;
  const size = given(first) ? first : given(last) ? last : DEFAULT_PAGE_SIZE;
  if (sizeArgument !== null) {
    const problem = checkPageSize(sizeArgument, size);
    if (problem) return { ok: false, problem };
  }
  if (given(first) || given(afterSeq)) {
    return { ok: true, window: { direction: 'forward', size, afterSeq: afterSeq ?? 0 } };
  }
  return { ok: true, window: { direction: 'backward', size, beforeSeq: beforeSeq ?? null } };
}

/** Checks a jump's side count (`messagesAround`'s `before`/`after`, `messages(around:)`'s `first`/`last`): an integer from 0 to MAX_PAGE_SIZE. */
export function checkAroundCount(argumentName: string, value: number): ArgumentProblem | null {
  if (Number.isInteger(value) && value >= 0 && value <= MAX_PAGE_SIZE) return null;
  return {
    argumentName,
    message: `Argument \`${argumentName}\` must be between 0 and ${MAX_PAGE_SIZE}, got ${value}.`,
  };
}

/** Each side of `messages(around:)` when neither `first` nor `last` is given. */
export const AROUND_SIDE_DEFAULT = 10;

/**
 * The sides of `messages(around:)`: `last` older messages and `first` newer
 * ones, the way `last` counts backward and `first` forward everywhere else;
 * AROUND_SIDE_DEFAULT each when neither is given, 0 for the one left out
 * when only one is ("start the page at the anchor" is `first` alone).
 */
export function aroundSides(first: number | null | undefined, last: number | null | undefined): { ok: true; older: number; newer: number } | { ok: false; problem: ArgumentProblem } {
  const neither = !given(first) && !given(last);
  const older = given(last) ? last : neither ? AROUND_SIDE_DEFAULT : 0;
  const newer = given(first) ? first : neither ? AROUND_SIDE_DEFAULT : 0;
  const problem = (given(last) ? checkAroundCount('last', last) : null) ?? (given(first) ? checkAroundCount('first', first) : null);
  return problem ? { ok: false, problem } : { ok: true, older, newer };
}
