/**
 * The search backend: the one seam between the API and whatever finds
 * messages by their words. The PostgreSQL backend (postgresSearch.ts) keeps
 * its index on the body rows and answers in one statement; a deployment that
 * outgrows it can put another engine (OpenSearch) behind this interface
 * without touching the resolvers. Whatever the engine, it must answer only
 * with messages the viewer may read, and fill pages before cutting them.
 */
import type { SqlRunner } from '../db/runner.ts';
import type { MessageFilter } from '../history/messageFilter.ts';
import type { SearchPosition } from '../history/searchCursor.ts';
import type { SearchQuery } from '../history/searchText.ts';
import type { NotFound } from '../store/outcome.ts';
import type { MessageRow } from '../store/rows.ts';
import type { RetentionClock } from '../store/sqlFragments.ts';

/** One search page asked for. */
export interface SearchRequest {
  viewerId: string;
  /** The words every hit contains; null: none asked for, every message the filter lets through is a hit. */
  query: SearchQuery | null;
  /** Only this conversation (a uuid); null: every conversation the viewer is in. */
  convId: string | null;
  /** Conditions every hit meets, applied before the page is cut (a page is never short for them). */
  filter: MessageFilter;
  /** Strictly after this hit; null: from the newest. */
  after: SearchPosition | null;
  /** How many hits, 1 to 100. */
  size: number;
  retention: RetentionClock;
}

/** A message that matched, with the text it matched in (as the viewer is served it) and its place in the order. */
export interface SearchHit {
  message: MessageRow;
  text: string;
  position: SearchPosition;
}

/** What a search found. */
export type SearchOutcome =
  | { kind: 'hits'; hits: SearchHit[]; hasNextPage: boolean }
  /** Narrowed to a conversation the viewer is not a member of (or that does not exist). */
  | NotFound;

/** Finds messages by their words. */
export interface SearchBackend {
  /** A name for logs and the benchmark. */
  readonly name: string;
  /**
   * Hits for `request.viewerId`, newest first (creation time, then
   * conversation id, then seq, all descending), at most `size` of them, each
   * one the viewer may read at the request's instant and passing its filter.
   */
  search(db: SqlRunner, request: SearchRequest): Promise<SearchOutcome>;
}
