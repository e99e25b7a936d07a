/** `Query.search`: messages by their words and a filter, and its connection and edges. */
import { messageFilterKey, searchScope } from '../../history/messageFilter.ts';
import { decodeSearchCursor, encodeSearchCursor, searchScopeKey } from '../../history/searchCursor.ts';
import { searchSnippet } from '../../history/searchSnippet.ts';
import { MAX_QUERY_LENGTH, parseSearchQuery, type SearchQuery } from '../../history/searchText.ts';
import { searchBackend } from '../../search/index.ts';
import { viewerOf } from '../context.ts';
import { primeWarmText } from '../warmTexts.ts';
import { badUserInput, echo } from '../errors.ts';
import type { MessageSearchConnectionResolvers, MessageSearchEdgeResolvers, QueryResolvers } from '../generated/resolvers.ts';
import type { MessageSearchConnectionModel, SearchHitModel } from '../models.ts';
import { conversationUuid } from './arguments.ts';
import { keysetConnectionResolvers, keysetSize } from './keyset.ts';
import { conversationNotFound } from './lookups.ts';

/** The `search` field of `Query`. */
export const searchQuery: Pick<QueryResolvers, 'search'> = {
  search: async (_root, args, context) => {
    const { viewerId, loaders } = viewerOf(context);
    const queryGiven = args.query !== null && args.query !== undefined;
    const checked = searchScope({ queryGiven, conversationId: args.conversationId, filter: args.filter });
    if (!checked.ok) throw badUserInput(checked.problem.message, checked.problem.argumentName);
    const { scope } = checked;
    const query = queryGiven ? parsedQuery(args.query!) : null;
    const convId = scope.conversationId === null ? null : conversationUuid(scope.conversationId);
    const first = keysetSize('search', args.first);
    const scopeKey = searchScopeKey(query?.key ?? null, convId, messageFilterKey(scope.filter));
    const after = args.after === null || args.after === undefined ? null : decodeSearchCursor(scopeKey, args.after);
    if (after === null && args.after !== null && args.after !== undefined) {
      throw badUserInput(
        `Argument \`after\` is not a cursor of this search: got ${echo(args.after)}. Use a \`pageInfo.endCursor\` of \`search\` with the same \`query\`, \`conversationId\` and \`filter\`.`,
        'after',
      );
    }
    const outcome = await searchBackend.search(context.db, { viewerId, query, convId, filter: scope.filter, after, size: first, retention: context.retention });
    if (outcome.kind === 'not-found') throw conversationNotFound(scope.conversationId!);
    for (const { message, text } of outcome.hits) {
      // Read in the search's snapshot with the index row: `content` needs no statement of its own.
      loaders.message.prime(message, message);
      primeWarmText(loaders, message, text);
    }
    const connection: MessageSearchConnectionModel = {
      rows: outcome.hits.map((hit): SearchHitModel => ({ hit, query })),
      hasNextPage: outcome.hasNextPage,
      hasPreviousPage: after !== null,
      cursorOf: (row) => encodeSearchCursor(scopeKey, row.hit.position),
    };
    return connection;
  },
};

/** `query` parsed, or `BAD_USER_INPUT` naming it. */
function parsedQuery(query: string): SearchQuery {
  const parsed = parseSearchQuery(query);
  if (parsed.ok) return parsed.query;
  const problem =
    parsed.problem.kind === 'too-long'
      ? `Argument \`query\` must be 1 to ${MAX_QUERY_LENGTH} characters, got ${parsed.problem.length}: ${echo(query)}.`
      : `Argument \`query\` must contain at least one letter or digit to search for, got ${echo(query)}.`;
  throw badUserInput(problem, 'query');
}

export const MessageSearchConnection: MessageSearchConnectionResolvers = keysetConnectionResolvers<SearchHitModel>();

export const MessageSearchEdge: MessageSearchEdgeResolvers = {
  node: (edge) => edge.row.hit.message,
  snippet: (edge) => searchSnippet(edge.row.hit.text, edge.row.query),
};
