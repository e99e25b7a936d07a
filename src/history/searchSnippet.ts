/**
 * Search snippets: the part of a message's text around its first match, and
 * where each match lies in it. Computed from the text the viewer is served
 * (never from the index), with the tokenizer's own normalization, so CJK
 * substrings, full-width letters and any letter case highlight alike.
 */
import type { SearchQuery } from './searchText.ts';
import { isCjkChar, MAX_WORD_LENGTH, normalizeForSearch } from './searchText.ts';

/** A half-open range of UTF-16 code units, `start` <= i < `end`. */
export interface TextRange {
  start: number;
  end: number;
}

/** A snippet and the matches within it. */
export interface Snippet {
  text: string;
  highlights: TextRange[];
}

/** Snippets longer than this many UTF-16 code units are cut around the first match. */
export const SNIPPET_LENGTH = 120;
/** How much text to keep before the first match when cutting. */
const LEAD = 30;
const ELLIPSIS = '…';
const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;

/** `text` normalized, with each normalized code unit's source range in `text`. */
function normalizedWithOrigins(text: string): { norm: string; from: number[]; to: number[] } {
  let norm = '';
  const from: number[] = [];
  const to: number[] = [];
  let offset = 0;
  for (const char of text) {
    const piece = normalizeForSearch(char);
    for (let k = 0; k < piece.length; k += 1) {
      from.push(offset);
      to.push(offset + char.length);
    }
    norm += piece;
    offset += char.length;
  }
  return { norm, from, to };
}

/** The code point that ends just before `index`, or '' at the start. */
function charBefore(text: string, index: number): string {
  if (index <= 0) return '';
  const low = text.charCodeAt(index - 1);
  return low >= 0xdc00 && low <= 0xdfff && index >= 2 ? text.slice(index - 2, index) : text[index - 1]!;
}

/** The code point that starts at `index`, or '' at the end. */
function charAt(text: string, index: number): string {
  return index >= text.length ? '' : String.fromCodePoint(text.codePointAt(index)!);
}

/** Whether `char` belongs to a non-CJK word (so a word match next to it is inside a longer word). */
function isWordChar(char: string): boolean {
  return char !== '' && WORD_CHAR.test(char) && !isCjkChar(char);
}

/** Every match of the query's words and runs in `text`, merged and in order. */
export function matchRanges(text: string, query: SearchQuery): TextRange[] {
  const { norm, from, to } = normalizedWithOrigins(text);
  const found: TextRange[] = [];
  for (const run of query.runs) {
    const needle = run.kind === 'word' ? run.text : run.chars.join('');
    for (let at = norm.indexOf(needle); at !== -1; at = norm.indexOf(needle, at + 1)) {
      const end = at + needle.length;
      // A word matches whole words only; a word cut to the longest length matches as a prefix.
      if (run.kind === 'word' && (isWordChar(charBefore(norm, at)) || (isWordChar(charAt(norm, end)) && [...needle].length < MAX_WORD_LENGTH))) continue;
      found.push({ start: from[at]!, end: to[end - 1]! });
    }
  }
  found.sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: TextRange[] = [];
  for (const range of found) {
    const last = merged.at(-1);
    if (last !== undefined && range.start <= last.end) last.end = Math.max(last.end, range.end);
    else merged.push({ ...range });
  }
  return merged;
}

/** Moves `index` off the second half of a surrogate pair. */
function codePointBoundary(text: string, index: number): number {
  return index > 0 && index < text.length && /[\uDC00-\uDFFF]/.test(text[index]!) ? index - 1 : index;
}

/**
 * The snippet of `text` for `query`: the whole text when it is short,
 * otherwise about `SNIPPET_LENGTH` code units from a little before the first
 * match, with `…` where text was cut. Highlights index into the snippet.
 * With no query (a search by filter alone) there is nothing to highlight:
 * the text from its start, cut the same way.
 */
export function searchSnippet(text: string, query: SearchQuery | null): Snippet {
  const ranges = query === null ? [] : matchRanges(text, query);
  if (text.length <= SNIPPET_LENGTH) return { text, highlights: ranges };
  const first = ranges[0]?.start ?? 0;
  let start = codePointBoundary(text, Math.max(0, Math.min(first - LEAD, text.length - SNIPPET_LENGTH)));
  const end = codePointBoundary(text, Math.min(text.length, start + SNIPPET_LENGTH));
  if (start < 0) start = 0;
  const lead = start > 0 ? ELLIPSIS : '';
  const shift = lead.length - start;
  const highlights = ranges
    .filter((r) => r.end > start && r.start < end)
    .map((r) => ({ start: Math.max(r.start, start) + shift, end: Math.min(r.end, end) + shift }));
  return { text: lead + text.slice(start, end) + (end < text.length ? ELLIPSIS : ''), highlights };
}
