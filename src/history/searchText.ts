/**
 * The search tokenizer: how a message's text and a search query become
 * lexemes, the same way on every backend. Pure and deterministic: the index
 * is written in JavaScript and stored as a PostgreSQL `tsvector` literal, so
 * PostgreSQL's own parser (which does not split Chinese) never re-reads it,
 * and PGlite and PostgreSQL store the very same lexemes.
 *
 * - Text is NFKC-normalized (full-width Latin, compatibility forms) and
 *   lower-cased, so Latin words match case-insensitively.
 * - A run of letters, marks and digits outside CJK is one word ("graphql",
 *   "p99"); anything else separates words.
 * - A run of CJK characters (Han, Hiragana, Katakana, Hangul) has no spaces
 *   to split on: it is indexed as its overlapping bigrams, each at its own
 *   position, plus its last character ("消息漫游" is 消息 息漫 漫游 游). A
 *   query run of two or more characters is the phrase of its bigrams (each
 *   right after the previous), so any substring of two or more characters is
 *   found and only where it really occurs; a one-character query is a prefix
 *   match (游:*), which finds every occurrence because every character is the
 *   first of a bigram or the last of its run.
 * - Query words and runs are ANDed, in any order.
 *
 * Regular expressions rather than `Intl.Segmenter`: its Chinese dictionary
 * ships with the ICU of each Node release, so an upgrade could segment the
 * query differently from the text indexed before it; bigrams never change.
 */

import { createHash } from 'node:crypto';

/**
 * A CJK character: a letter, mark or digit used by Han, Hiragana, Katakana
 * or Hangul (script extensions, so the prolonged sound mark ー of メッセージ
 * counts, and CJK punctuation, which is not a letter, does not).
 */
const CJK_CHAR = String.raw`(?:(?=[\p{L}\p{M}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}])`;
/** A CJK run, or a run of other letters, marks and digits. */
const RUN = new RegExp(String.raw`(${CJK_CHAR}+)|((?:(?!${CJK_CHAR})[\p{L}\p{M}\p{N}])+)`, 'gu');

/** Whether `char` (one code point, normalized) is a CJK character in the tokenizer's sense. */
export function isCjkChar(char: string): boolean {
  return CJK_ONE.test(char);
}
const CJK_ONE = new RegExp(String.raw`^${CJK_CHAR}$`, 'u');

/** Words longer than this are cut to it, in the index and in queries alike (a lexeme must stay under 2 KB). */
export const MAX_WORD_LENGTH = 64;
/** The longest query accepted, in characters. */
export const MAX_QUERY_LENGTH = 200;
/** PostgreSQL keeps positions up to this; later ones are clamped, so phrases past it may be missed. */
const MAX_POSITION = 16383;

/** One piece of a text: a word, or a run of CJK characters. */
export type TextRun = { kind: 'word'; text: string } | { kind: 'cjk'; chars: string[] };

/** The normalized form that both the index and queries are made from. */
export function normalizeForSearch(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** The words and CJK runs of `text`, normalized, in order. */
export function textRuns(text: string): TextRun[] {
  const runs: TextRun[] = [];
  for (const match of normalizeForSearch(text).matchAll(RUN)) {
    if (match[1] !== undefined) runs.push({ kind: 'cjk', chars: [...match[1]] });
    else runs.push({ kind: 'word', text: [...match[2]!].slice(0, MAX_WORD_LENGTH).join('') });
  }
  return runs;
}

/** The lexemes of `text` with their positions (1-based), in order of first appearance. */
export function indexLexemes(text: string): Map<string, number[]> {
  const lexemes = new Map<string, number[]>();
  let position = 0;
  const add = (lexeme: string) => {
    position = Math.min(position + 1, MAX_POSITION);
    const positions = lexemes.get(lexeme);
    if (positions === undefined) lexemes.set(lexeme, [position]);
    else if (positions.at(-1) !== position) positions.push(position);
  };
  for (const run of textRuns(text)) {
    if (run.kind === 'word') {
      add(run.text);
      continue;
    }
    for (let i = 0; i + 1 < run.chars.length; i += 1) add(run.chars[i]! + run.chars[i + 1]!);
    add(run.chars.at(-1)!);
  }
  return lexemes;
}

/** How many bytes of MD5 a conversation's search key keeps: 48 bits, 8 base64 characters. */
export const SEARCH_KEY_BYTES = 6;

/**
 * The prefix every lexeme of conversation `convId` is indexed under: the
 * first 6 bytes of the MD5 of its id in base64, 8 characters (PostgreSQL
 * computes the same in `searchKeySql`, postgresSearch.ts); it lengthens
 * every lexeme, so it is kept short. A search
 * always runs per conversation, so keyed lexemes make each GIN lookup read
 * that conversation's postings alone (`<key>消息`), instead of intersecting
 * a word's posting list over all conversations with a per-conversation
 * lexeme: 2-4x less work per conversation (measured on the benchmark data).
 * Two conversations sharing a key (1 in 2^48) only share postings: the
 * statement still filters on the conversation id.
 */
export function conversationSearchKey(convId: string): string {
  return createHash('md5').update(convId.toLowerCase()).digest().subarray(0, SEARCH_KEY_BYTES).toString('base64');
}

/**
 * Marks where a query lexeme's conversation key goes in `tsqueryTemplate`:
 * right after its opening quote. No lexeme holds `#` or a quote, so `'#`
 * only ever opens a lexeme.
 */
export const QUERY_KEY_MARK = "'#";

/** A lexeme quoted for `tsvector` and `tsquery` input. */
function quoted(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/**
 * The `tsvector` literal of a message of conversation `convId` with `text`:
 * its lexemes, each behind the conversation's key, with positions (empty
 * when the text has no words). Pass it as a parameter cast with `::tsvector`.
 */
export function searchVector(convId: string, text: string): string {
  const key = conversationSearchKey(convId);
  const parts: string[] = [];
  for (const [lexeme, positions] of indexLexemes(text)) parts.push(`${quoted(key + lexeme)}:${positions.slice(0, 256).join(',')}`);
  return parts.join(' ');
}

/** A parsed search: what must all occur in a message. */
export interface SearchQuery {
  /** Each word or CJK run of the query, normalized; all must match. */
  runs: TextRun[];
  /**
   * The `tsquery` literal with `#` where each lexeme's conversation key goes
   * (`'#消息'`); `tsqueryFor` fills it in for one conversation.
   */
  tsqueryTemplate: string;
  /** A stable key of what is searched for, so a cursor is only taken back for the same search. */
  key: string;
}

/** Why a query cannot be searched for. */
export type QueryProblem = { kind: 'too-long'; length: number } | { kind: 'no-words' };

/** `query` parsed, or why it cannot be searched for. */
export function parseSearchQuery(query: string): { ok: true; query: SearchQuery } | { ok: false; problem: QueryProblem } {
  const length = [...query].length;
  if (length > MAX_QUERY_LENGTH) return { ok: false, problem: { kind: 'too-long', length } };
  // The same run twice adds nothing: keep the first.
  const seen = new Set<string>();
  const runs = textRuns(query).filter((run) => {
    const key = run.kind === 'word' ? `w:${run.text}` : `c:${run.chars.join('')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (runs.length === 0) return { ok: false, problem: { kind: 'no-words' } };
  const terms = runs.map((run) => {
    if (run.kind === 'word') return quoted(`#${run.text}`);
    if (run.chars.length === 1) return `${quoted(`#${run.chars[0]!}`)}:*`;
    const bigrams = run.chars.slice(0, -1).map((c, i) => quoted(`#${c}${run.chars[i + 1]!}`));
    return bigrams.length === 1 ? bigrams[0]! : `(${bigrams.join(' <-> ')})`;
  });
  const key = runs.map((run) => (run.kind === 'word' ? run.text : run.chars.join(''))).join(' ');
  return { ok: true, query: { runs, tsqueryTemplate: terms.join(' & '), key } };
}

/** The `tsquery` literal of `query` for the conversation with search key `key`. */
export function tsqueryFor(query: SearchQuery, key: string): string {
  return query.tsqueryTemplate.replaceAll(QUERY_KEY_MARK, `'${key}`);
}
