/**
 * Search filters (`search(query, conversationId, filter: MessageFilter)`):
 * what a client may ask for, checked and put in one canonical form, so equal
 * filters build the same statement and take each other's cursors. Pure: ids
 * are checked for their shape only; whether the viewer is in the
 * conversation is the search statement's to say.
 */
import { decodeConversationId } from './globalId.ts';
import type { ArgumentProblem } from './pageWindow.ts';
import { parseDateTime } from './timeRange.ts';
import { isValidUserId, MAX_USER_ID_LENGTH } from './userId.ts';

/** The most user ids `filter.senderIds` may hold. */
export const MAX_SENDER_IDS = 100;

/** `MessageFilter` as the client sent it (`DateTime` values as their RFC 3339 text). */
export interface MessageFilterArgs {
  conversationId?: string | null;
  senderIds?: readonly string[] | null;
  sentAfter?: string | null;
  sentBefore?: string | null;
  mentionsMe?: boolean | null;
  starred?: boolean | null;
  pinned?: boolean | null;
  hasReplies?: boolean | null;
}

/** A checked filter; null: no condition. The conversation is apart, in `SearchScope`. */
export interface MessageFilter {
  /** Distinct and sorted. */
  senderIds: string[] | null;
  /**
   * Exclusive bounds as ISO 8601 text in UTC with microseconds,
   * PostgreSQL's precision: `sentAfter` rounded down and `sentBefore` up,
   * so a time given in finer units than a microsecond bounds exactly what
   * it names.
   */
  sentAfter: string | null;
  sentBefore: string | null;
  /** true: mentions the viewer by name or everyone, and not sent by the viewer; false: the opposite. */
  mentionsMe: boolean | null;
  starred: boolean | null;
  pinned: boolean | null;
  /** true: the root of a thread with a reply the viewer can see (`replyCount` > 0); false: the opposite. */
  hasReplies: boolean | null;
}

/** What a search covers besides its words: one conversation (its id as given) or all, and the filter. */
interface SearchScope {
  conversationId: string | null;
  filter: MessageFilter;
}

export type SearchScopeResult = { ok: true; scope: SearchScope } | { ok: false; problem: ArgumentProblem };

/** The arguments of `search` that say what it covers. */
export interface SearchScopeArgs {
  /** Whether `query` was given (its words are checked elsewhere: searchText.ts). */
  queryGiven: boolean;
  conversationId?: string | null;
  filter?: MessageFilterArgs | null;
}

const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/** A client's value quoted for a message, cut short if long. */
function quoted(value: string): string {
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}..."` : text;
}

/** An accepted date-time as whole milliseconds since the epoch and the nanoseconds past them (0 to 999,999). */
function instantParts(text: string): { millis: number; nanos: number } {
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  // Date.parse gets three digits at most; the ones past them are read here, never rounded away.
  const millis = Date.parse(fraction.length > 3 ? text.replace(/\.\d+/, `.${fraction.slice(0, 3)}`) : text);
  return { millis, nanos: Number(fraction.slice(3).padEnd(6, '0')) };
}

/**
 * An RFC 3339 date-time as an exclusive bound at microsecond precision, or
 * null when it is not one `parseDateTime` accepts. `round` 'down' answers
 * the latest microsecond at or before it, 'up' the earliest at or after it.
 */
export function microsecondBound(text: string, round: 'down' | 'up'): string | null {
  if (parseDateTime(text) === null) return null;
  const { millis, nanos } = instantParts(text);
  const micros = round === 'down' ? Math.floor(nanos / 1000) : Math.ceil(nanos / 1000);
  const iso = new Date(millis + Math.floor(micros / 1000)).toISOString();
  // Rounded up past year 9999, which PostgreSQL would not read in this form: the last microsecond instead (only a message stamped in it is left out).
  if (iso.startsWith('+')) return '9999-12-31T23:59:59.999999Z';
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/** Whether accepted date-time `a` names an earlier instant than `b`, to the nanosecond. */
function isEarlier(a: string, b: string): boolean {
  const [x, y] = [instantParts(a), instantParts(b)];
  return x.millis < y.millis || (x.millis === y.millis && x.nanos < y.nanos);
}

/** Filter field `name` as a bound (undefined: not given), or the refusal of a time that is not one. */
function timeBound(filter: MessageFilterArgs, name: 'sentAfter' | 'sentBefore', round: 'down' | 'up'): string | undefined | SearchScopeResult {
  const text = filter[name];
  if (!given(text)) return undefined;
  const bound = microsecondBound(text, round);
  if (bound !== null) return bound;
  // The DateTime scalar refuses these before any resolver runs; checked again so the rule stands alone.
  const argumentName = `filter.${name}`;
  return { ok: false, problem: { argumentName, message: `Argument \`${argumentName}\` must be an RFC 3339 date-time that exists, got ${quoted(text)}.` } };
}

/**
 * Checks `search`'s `conversationId`, `filter` and whether a query was
 * given: the conversation named either way (both ways, the same one: a
 * conversation id that is not ours compares as given), 1 to
 * `MAX_SENDER_IDS` valid user ids, `sentAfter` before `sentBefore`, and
 * words or at least one condition to search by. Answers the scope, or the
 * problem naming the argument at fault.
 */
export function searchScope(args: SearchScopeArgs): SearchScopeResult {
  const refuse = (argumentName: string, message: string): SearchScopeResult => ({ ok: false, problem: { argumentName, message } });
  const filter = args.filter ?? {};
  const argumentId = given(args.conversationId) ? args.conversationId : null;
  const filterId = given(filter.conversationId) ? filter.conversationId : null;
  if (argumentId !== null && filterId !== null) {
    const same = (decodeConversationId(argumentId) ?? argumentId) === (decodeConversationId(filterId) ?? filterId);
    if (!same) {
      return refuse(
        'filter.conversationId',
        `Arguments \`conversationId\` and \`filter.conversationId\` must name the same conversation, got ${quoted(argumentId)} and ${quoted(filterId)}. Give it one way, or the same both ways.`,
      );
    }
  }
  let senderIds: string[] | null = null;
  if (given(filter.senderIds)) {
    const ids = filter.senderIds;
    if (ids.length === 0 || ids.length > MAX_SENDER_IDS) {
      return refuse('filter.senderIds', `Argument \`filter.senderIds\` must hold 1 to ${MAX_SENDER_IDS} user ids, got ${ids.length}. Leave it out to find messages from anyone.`);
    }
    const invalid = ids.find((id) => !isValidUserId(id));
    if (invalid !== undefined) {
      return refuse('filter.senderIds', `Argument \`filter.senderIds\` must hold user ids of 1 to ${MAX_USER_ID_LENGTH} printable characters, got ${quoted(invalid)}.`);
    }
    senderIds = [...new Set(ids)].sort();
  }
  const sentAfter = timeBound(filter, 'sentAfter', 'down');
  if (typeof sentAfter === 'object') return sentAfter;
  const sentBefore = timeBound(filter, 'sentBefore', 'up');
  if (typeof sentBefore === 'object') return sentBefore;
  if (sentAfter !== undefined && sentBefore !== undefined) {
    if (!isEarlier(filter.sentAfter!, filter.sentBefore!)) {
      return refuse(
        'filter.sentBefore',
        `Argument \`filter.sentBefore\` must be later than \`filter.sentAfter\` (both are exclusive), got ${quoted(filter.sentBefore!)} and ${quoted(filter.sentAfter!)}.`,
      );
    }
  }
  const scope: SearchScope = {
    conversationId: argumentId ?? filterId,
    filter: {
      senderIds,
      sentAfter: sentAfter ?? null,
      sentBefore: sentBefore ?? null,
      mentionsMe: filter.mentionsMe ?? null,
      starred: filter.starred ?? null,
      pinned: filter.pinned ?? null,
      hasReplies: filter.hasReplies ?? null,
    },
  };
  if (!args.queryGiven && scope.conversationId === null && messageFilterKey(scope.filter) === '') {
    return refuse(
      'query',
      'Argument `query` is required unless the search is narrowed: give words to search for, a `conversationId`, or a `filter` with at least one condition.',
    );
  }
  return { ok: true, scope };
}

/** A stable key of `filter`'s conditions, '' when it has none, so a cursor is only taken back by the same filter. */
export function messageFilterKey(filter: MessageFilter): string {
  const conditions = CONDITIONS.filter((name) => filter[name] !== null).map((name) => [name, filter[name]]);
  return conditions.length === 0 ? '' : JSON.stringify(conditions);
}

/** Every condition of a filter, in the order its key lists them. */
const CONDITIONS = ['senderIds', 'sentAfter', 'sentBefore', 'mentionsMe', 'starred', 'pinned', 'hasReplies'] as const satisfies readonly (keyof MessageFilter)[];
