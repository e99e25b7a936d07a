/**
 * Turning `messages(first, after, last, before)` arguments into one page
 * window, or a refusal that names the argument at fault. Pure: the caller has
 * already decoded cursors to seqs.
 */

import { isGiven as given, listSize } from './listSizes.ts';

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


/** Resolves the arguments of `messages` (or of `replies`, paged the same way) into a window, or says which argument is wrong. */
export function pageWindow(args: PageArgs, list: 'messages' | 'replies' = 'messages'): WindowResult {
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
  // Sizes and their range come from the one table (listSizes.ts).
  const checked = given(first) ? listSize(list, 'first', first) : listSize(list, 'last', last);
  if (!checked.ok) return { ok: false, problem: checked.problem };
  const size = checked.size;
  if (given(first) || given(afterSeq)) {
    return { ok: true, window: { direction: 'forward', size, afterSeq: afterSeq ?? 0 } };
  }
  return { ok: true, window: { direction: 'backward', size, beforeSeq: beforeSeq ?? null } };
}

/** Checks a jump's side count (`messagesAround`'s and `messagesAt`'s `before`/`after`): answers the count, or the problem. */
export function aroundCount(argumentName: string, value: number | null | undefined): { ok: true; size: number } | { ok: false; problem: ArgumentProblem } {
  return listSize('aroundSide', argumentName, value);
}

/**
 * The sides of `messages(around:)`: `last` older messages and `first` newer
 * ones, the way `last` counts backward and `first` forward everywhere else;
 * the table's `jumpSide` default each when neither is given, 0 for the one left out
 * when only one is ("start the page at the anchor" is `first` alone).
 */
export function aroundSides(first: number | null | undefined, last: number | null | undefined): { ok: true; older: number; newer: number } | { ok: false; problem: ArgumentProblem } {
  const neither = !given(first) && !given(last);
  const side = (argumentName: string, value: number | null | undefined) => (given(value) || neither ? listSize('jumpSide', argumentName, value) : ({ ok: true, size: 0 } as const));
  const older = side('last', last);
  if (!older.ok) return older;
  const newer = side('first', first);
  if (!newer.ok) return newer;
  return { ok: true, older: older.size, newer: newer.size };
}
