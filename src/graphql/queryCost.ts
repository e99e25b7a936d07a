/**
 * How many messages an operation could return, counted the way GitHub counts
 * nodes: every page multiplies everything below it by its size, so
 * `messages(last: 100) { edges { node { conversation { messages(last: 100) ...`
 * costs 100 + 100 x 100. Pure: it needs only the document, the variables and
 * the page-size arguments of each paged field.
 */
import { type ArgumentNode, type FragmentDefinitionNode, Kind, type SelectionSetNode, type ValueNode } from 'graphql';
import { AROUND_SIDE_DEFAULT, DEFAULT_PAGE_SIZE } from '../history/pageWindow.ts';

/** How big a page a paged field can answer, from its arguments (already resolved to values). */
type PageSize = (args: Record<string, unknown>) => number;

const AROUND_DEFAULT = 20;
const INBOX_DEFAULT = 20;
const SEARCH_DEFAULT = 20;
const count = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback);

/** The paged fields of the schema and the most items each can answer. */
export const PAGED_FIELDS: Record<string, PageSize> = {
  messages: (args) =>
    // A jump (`around`, no cursor): both sides and the anchor, with the defaults of `aroundSides`.
    args.around != null && args.after == null && args.before == null
      ? count(args.last, args.first == null ? AROUND_SIDE_DEFAULT : 0) + count(args.first, args.last == null ? AROUND_SIDE_DEFAULT : 0) + 1
      : count(args.first ?? args.last, DEFAULT_PAGE_SIZE),
  messagesAround: (args) => count(args.before, AROUND_DEFAULT) + count(args.after, AROUND_DEFAULT) + 1,
  // Each hit is a message, and may ask for its conversation's pages.
  search: (args) => count(args.first, SEARCH_DEFAULT),
};

/**
 * Lists that are not messages but multiply the pages below them: each
 * conversation of an inbox page can ask for its own message pages.
 */
export const MULTIPLYING_FIELDS: Record<string, PageSize> = {
  conversations: (args) => count(args.first, INBOX_DEFAULT),
};

function valueOf(node: ValueNode, variables: Record<string, unknown>): unknown {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  // Whether `around`, `after` or `before` is given decides how `messages` is counted.
  if (node.kind === Kind.STRING) return node.value;
  return undefined;
}

function argumentsOf(args: readonly ArgumentNode[] | undefined, variables: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries((args ?? []).map((a) => [a.name.value, valueOf(a.value, variables)]));
}

/** The number of messages the selection could return at most. */
export function operationCost(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  const walk = (set: SelectionSetNode, multiplier: number, inFragments: Set<string>): number => {
    let total = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const pageSize = PAGED_FIELDS[name] ?? MULTIPLYING_FIELDS[name];
        const here = pageSize ? multiplier * pageSize(argumentsOf(selection.arguments, variables)) : multiplier;
        if (PAGED_FIELDS[name]) total += here;
        if (selection.selectionSet) total += walk(selection.selectionSet, here, inFragments);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        total += walk(selection.selectionSet, multiplier, inFragments);
      } else {
        const name = selection.name.value;
        const fragment = fragments[name];
        // Cycles are refused by validation before this runs; guard anyway.
        if (fragment === undefined || inFragments.has(name)) continue;
        total += walk(fragment.selectionSet, multiplier, new Set([...inFragments, name]));
      }
    }
    return total;
  };
  return walk(selectionSet, 1, new Set());
}
