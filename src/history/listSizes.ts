/**
 * Every paged list of the schema, declared once: how many items it answers
 * when the size argument is left out (equal to the schema's default, which a
 * test checks) and the most it may be asked for. The resolvers read their
 * defaults and ranges here, and the operation gate (src/graphql/gate/) counts
 * an operation's cost from the same numbers, so the two cannot disagree.
 * Pure: no I/O.
 */

/** One list's sizes: `min` and `max` bound what a client may ask for (never clamped). */
export interface ListSize {
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

const size = (fallback: number, min: number, max: number): ListSize => ({ default: fallback, min, max });

/** The paged lists by name. */
export const LIST_SIZES = {
  /** `Conversation.messages(first | last)` of an ordinary page. */
  messages: size(20, 1, 100),
  /** Each side of `Conversation.messages(around:)` (`first` newer, `last` older) when neither is given. */
  jumpSide: size(10, 0, 100),
  /** Each side of the deprecated `messagesAround` and of `messagesAt` (`before`, `after`). */
  aroundSide: size(20, 0, 100),
  /** `Query.search(first)`. */
  search: size(20, 1, 100),
  /** `Viewer.conversations(first)`: the inbox. */
  conversations: size(20, 1, 100),
  /** `Viewer.announcements(first)`. */
  announcements: size(20, 1, 100),
  /** `Conversation.members(first)`. */
  members: size(50, 1, 100),
  /** `Conversation.changes(first)`: feed entries are small. */
  changes: size(100, 1, 500),
  /** `Message.replies(first | last)`: a thread, paged like `messages`. */
  replies: size(20, 1, 100),
  /** `Message.edits(first)`: a message's earlier versions. */
  edits: size(20, 1, 100),
  /** `Conversation.pinnedMessages(first)`: at most 50 are pinned. */
  pins: size(20, 1, 50),
  /** `Viewer.starredMessages(first)`. */
  starred: size(20, 1, 100),
  /** `Viewer.mentions(first)`. */
  mentions: size(20, 1, 100),
  /** `ReactionGroup.users(first)`. */
  reactors: size(10, 1, 100),
} as const satisfies Record<string, ListSize>;

export type ListName = keyof typeof LIST_SIZES;

/** A size argument that is out of range, named, with a sentence for the client. */
export interface SizeProblem {
  argumentName: string;
  message: string;
}

/** Whether a size argument was given (GraphQL's explicit `null` counts as left out). */
export const isGiven = (value: number | null | undefined): value is number => value !== null && value !== undefined;

/**
 * The size `value` asks of list `name`: its default when left out, or the
 * value itself; a problem naming `argumentName` when it is out of range.
 */
export function listSize(name: ListName, argumentName: string, value: number | null | undefined): { ok: true; size: number } | { ok: false; problem: SizeProblem } {
  const limits = LIST_SIZES[name];
  if (!isGiven(value)) return { ok: true, size: limits.default };
  if (Number.isInteger(value) && value >= limits.min && value <= limits.max) return { ok: true, size: value };
  return {
    ok: false,
    problem: { argumentName, message: `Argument \`${argumentName}\` must be between ${limits.min} and ${limits.max}, got ${value}.` },
  };
}

/**
 * The most items list `name` can answer for `value`, for counting cost
 * before anything runs: the default when left out, the maximum when out of
 * range upward (the resolver refuses it, but the count must never be low).
 */
export function mostItems(name: ListName, value: unknown): number {
  const limits = LIST_SIZES[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) return limits.default;
  return Math.min(Math.max(Math.ceil(value), 0), limits.max);
}
