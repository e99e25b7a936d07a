import { describe, expect, it } from 'vitest';
import { decodeSearchCursor, encodeSearchCursor, searchScopeKey } from '../../src/history/searchCursor.ts';
import { matchRanges, searchSnippet, SNIPPET_LENGTH } from '../../src/history/searchSnippet.ts';
import {
  conversationSearchKey,
  indexLexemes,
  MAX_QUERY_LENGTH,
  MAX_WORD_LENGTH,
  parseSearchQuery,
  type SearchQuery,
  searchVector,
  textRuns,
  tsqueryFor,
} from '../../src/history/searchText.ts';

const CONV = '00000000-0000-4000-8000-000000000001';

function queryOf(text: string): SearchQuery {
  const parsed = parseSearchQuery(text);
  if (!parsed.ok) throw new Error(`not a query: ${text}`);
  return parsed.query;
}

describe('Search tokenizer: text runs', () => {
  it('splits Latin words on anything that is not a letter, mark or digit, lower-cased', () => {
    expect(textRuns("Can you review my PR? p99 isn't bad")).toEqual(
      ['can', 'you', 'review', 'my', 'pr', 'p99', 'isn', 't', 'bad'].map((text) => ({ kind: 'word', text })),
    );
  });

  it('keeps a CJK run whole and separates it from adjacent Latin text', () => {
    expect(textRuns('用GraphQL做游标分页！')).toEqual([
      { kind: 'cjk', chars: ['用'] },
      { kind: 'word', text: 'graphql' },
      { kind: 'cjk', chars: ['做', '游', '标', '分', '页'] },
    ]);
  });

  it('normalizes full-width letters and compatibility forms (NFKC)', () => {
    expect(textRuns('ＧｒａｐｈＱＬ　ｐ９９')).toEqual([
      { kind: 'word', text: 'graphql' },
      { kind: 'word', text: 'p99' },
    ]);
  });

  it('treats Hiragana, Katakana and Hangul as CJK runs', () => {
    expect(textRuns('メッセージ 검색 ありがとう').map((r) => r.kind)).toEqual(['cjk', 'cjk', 'cjk']);
  });

  it('cuts words to the longest length, in the index and queries alike', () => {
    const long = 'a'.repeat(MAX_WORD_LENGTH + 10);
    expect(textRuns(long)).toEqual([{ kind: 'word', text: 'a'.repeat(MAX_WORD_LENGTH) }]);
    expect(queryOf(long).runs).toEqual(textRuns(long));
  });

  it('finds nothing in an empty text or one of only punctuation and emoji', () => {
    expect(textRuns('')).toEqual([]);
    expect(textRuns('… 👍 !!! ——')).toEqual([]);
  });
});

describe('Search tokenizer: index lexemes', () => {
  it('indexes a CJK run as its overlapping bigrams and its last character, at consecutive positions', () => {
    expect(indexLexemes('消息漫游')).toEqual(
      new Map([
        ['消息', [1]],
        ['息漫', [2]],
        ['漫游', [3]],
        ['游', [4]],
      ]),
    );
  });

  it('indexes a one-character run as that character', () => {
    expect(indexLexemes('收 ok')).toEqual(
      new Map([
        ['收', [1]],
        ['ok', [2]],
      ]),
    );
  });

  it('collects every position of a repeated lexeme', () => {
    expect(indexLexemes('ok OK Ok')).toEqual(new Map([['ok', [1, 2, 3]]]));
  });

  it('writes a tsvector literal with every lexeme behind the conversation key', () => {
    const key = conversationSearchKey(CONV);
    expect(key).toMatch(/^[0-9A-Za-z+/]{8}$/);
    expect(searchVector(CONV, 'GraphQL 分页')).toBe(`'${key}graphql':1 '${key}分页':2 '${key}页':3`);
  });

  it('gives each conversation its own key, whatever the case of its id', () => {
    const other = '00000000-0000-4000-8000-000000000002';
    expect(conversationSearchKey(other)).not.toBe(conversationSearchKey(CONV));
    expect(conversationSearchKey(CONV.toUpperCase())).toBe(conversationSearchKey(CONV));
  });

  it('writes an empty text as an empty vector', () => {
    expect(searchVector(CONV, '👍')).toBe('');
  });
});

describe('Search tokenizer: queries', () => {
  it('ANDs Latin words', () => {
    expect(queryOf('Review PR').tsqueryTemplate).toBe(`'#review' & '#pr'`);
  });

  it('makes a CJK run of two characters one bigram, and a longer one the phrase of its bigrams', () => {
    expect(queryOf('消息').tsqueryTemplate).toBe(`'#消息'`);
    expect(queryOf('消息漫游').tsqueryTemplate).toBe(`('#消息' <-> '#息漫' <-> '#漫游')`);
  });

  it('makes a one-character CJK query a prefix match', () => {
    expect(queryOf('游').tsqueryTemplate).toBe(`'#游':*`);
  });

  it('parses mixed text into words and runs', () => {
    expect(queryOf('GraphQL 游标分页').tsqueryTemplate).toBe(`'#graphql' & ('#游标' <-> '#标分' <-> '#分页')`);
  });

  it('fills in the conversation key of every lexeme', () => {
    expect(tsqueryFor(queryOf('GraphQL 游标 游'), 'abc')).toBe(`'abcgraphql' & 'abc游标' & 'abc游':*`);
  });

  it('drops repeated words, so a query and its repetition are the same search', () => {
    expect(queryOf('ok OK ok').key).toBe(queryOf('ok').key);
  });

  it('refuses a query with nothing to search for, or one that is too long', () => {
    expect(parseSearchQuery(' !? 👍 ')).toEqual({ ok: false, problem: { kind: 'no-words' } });
    expect(parseSearchQuery('')).toEqual({ ok: false, problem: { kind: 'no-words' } });
    expect(parseSearchQuery('a'.repeat(MAX_QUERY_LENGTH))).toMatchObject({ ok: true });
    expect(parseSearchQuery('a'.repeat(MAX_QUERY_LENGTH + 1))).toEqual({ ok: false, problem: { kind: 'too-long', length: MAX_QUERY_LENGTH + 1 } });
  });

  it('never lets a query lexeme hold a key mark or break out of its quotes', () => {
    expect(queryOf(`#${CONV} '#x`).tsqueryTemplate).toBe(`'#00000000' & '#0000' & '#4000' & '#8000' & '#000000000001' & '#x'`);
    expect(queryOf(`it's a \\ test`).tsqueryTemplate).toBe(`'#it' & '#s' & '#a' & '#test'`);
  });
});

describe('Search snippets', () => {
  it('marks every match of every query part, case-insensitively', () => {
    const text = 'GraphQL 游标分页 works; graphql rocks';
    expect(searchSnippet(text, queryOf('graphql 分页'))).toEqual({
      text,
      highlights: [
        { start: 0, end: 7 },
        { start: 10, end: 12 },
        { start: 20, end: 27 },
      ],
    });
  });

  it('marks whole words only', () => {
    expect(matchRanges('logs log login', queryOf('log'))).toEqual([{ start: 5, end: 8 }]);
  });

  it('maps full-width matches back to the original text', () => {
    expect(matchRanges('用ＧｒａｐｈＱＬ吧', queryOf('graphql'))).toEqual([{ start: 1, end: 8 }]);
  });

  it('merges overlapping matches', () => {
    expect(matchRanges('消息漫游', queryOf('消息 息漫'))).toEqual([{ start: 0, end: 3 }]);
  });

  it('cuts a long text around its first match, with ellipses, and shifts the highlights', () => {
    const text = `${'x '.repeat(100)}消息 ${'y '.repeat(100)}`;
    const snippet = searchSnippet(text, queryOf('消息'));
    expect(snippet.text.startsWith('…')).toBe(true);
    expect(snippet.text.endsWith('…')).toBe(true);
    expect(snippet.text.length).toBe(SNIPPET_LENGTH + 2);
    expect(snippet.highlights).toHaveLength(1);
    const [range] = snippet.highlights;
    expect(snippet.text.slice(range!.start, range!.end)).toBe('消息');
  });

  it('keeps a text of exactly the snippet length whole', () => {
    const text = `消息${'z'.repeat(SNIPPET_LENGTH - 2)}`;
    expect(searchSnippet(text, queryOf('消息'))).toEqual({ text, highlights: [{ start: 0, end: 2 }] });
  });

  it('never cuts a surrogate pair in half', () => {
    const text = `${'😀'.repeat(80)}消息${'😀'.repeat(80)}`;
    const snippet = searchSnippet(text, queryOf('消息'));
    expect(snippet.text).toBe(snippet.text.normalize());
    expect([...snippet.text].every((c) => c === '…' || c === '😀' || c === '消' || c === '息')).toBe(true);
  });
});

describe('Search snippets without words (a search by filter alone)', () => {
  it('keeps a short text whole, with nothing highlighted', () => {
    expect(searchSnippet('周末去爬山吗', null)).toEqual({ text: '周末去爬山吗', highlights: [] });
    expect(searchSnippet('', null)).toEqual({ text: '', highlights: [] });
  });

  it('keeps a text of exactly the snippet length whole', () => {
    const text = 'z'.repeat(SNIPPET_LENGTH);
    expect(searchSnippet(text, null)).toEqual({ text, highlights: [] });
  });

  it('shows a long text from its start, cut at the snippet length with one ellipsis', () => {
    const text = `${'a'.repeat(SNIPPET_LENGTH)}b`;
    expect(searchSnippet(text, null)).toEqual({ text: `${'a'.repeat(SNIPPET_LENGTH)}…`, highlights: [] });
  });

  it('never cuts a surrogate pair in half at the end', () => {
    const text = `x${'😀'.repeat(SNIPPET_LENGTH)}`;
    const snippet = searchSnippet(text, null);
    expect(snippet.text).toBe(`x${'😀'.repeat((SNIPPET_LENGTH - 2) / 2)}…`);
    expect(snippet.highlights).toEqual([]);
  });
});

describe('Search cursors', () => {
  const scope = searchScopeKey(queryOf('消息').key, null);
  const position = { createdMicros: 1_764_000_000_123_456, convId: CONV, seq: 42 };

  it('round-trips a position', () => {
    expect(decodeSearchCursor(scope, encodeSearchCursor(scope, position))).toEqual(position);
  });

  it('rejects a cursor of another query or another conversation scope', () => {
    const cursor = encodeSearchCursor(scope, position);
    expect(decodeSearchCursor(searchScopeKey(queryOf('漫游').key, null), cursor)).toBeNull();
    expect(decodeSearchCursor(searchScopeKey(queryOf('消息').key, CONV), cursor)).toBeNull();
  });

  it('keeps the scope of a search of words alone as it was before filters, so those cursors stay valid', () => {
    expect(searchScopeKey(queryOf('消息').key, null, '')).toBe(scope);
    expect(decodeSearchCursor(searchScopeKey(queryOf('消息').key, null), encodeSearchCursor(scope, position))).toEqual(position);
  });

  it('rejects a cursor of another filter, of the same filter without the words, or of no filter', () => {
    const filtered = searchScopeKey(queryOf('消息').key, null, '[["starred",true]]');
    const cursor = encodeSearchCursor(filtered, position);
    expect(decodeSearchCursor(filtered, cursor)).toEqual(position);
    expect(decodeSearchCursor(scope, cursor)).toBeNull();
    expect(decodeSearchCursor(searchScopeKey(queryOf('消息').key, null, '[["starred",false]]'), cursor)).toBeNull();
    expect(decodeSearchCursor(searchScopeKey(null, null, '[["starred",true]]'), cursor)).toBeNull();
  });

  it('tells a search by conversation alone, without words, from every search of words', () => {
    expect(searchScopeKey(null, CONV, '')).not.toBe(searchScopeKey(queryOf('消息').key, CONV, ''));
    expect(searchScopeKey(null, CONV, '')).not.toBe(searchScopeKey(null, null, ''));
  });

  it('accepts the cursor of the same words in another spelling', () => {
    const cursor = encodeSearchCursor(scope, position);
    expect(decodeSearchCursor(searchScopeKey(queryOf(' 消息！').key, null), cursor)).toEqual(position);
  });

  it('rejects edited and foreign tokens', () => {
    const cursor = encodeSearchCursor(scope, position);
    expect(decodeSearchCursor(scope, `${cursor}A`)).toBeNull();
    expect(decodeSearchCursor(scope, 'not a cursor')).toBeNull();
    expect(decodeSearchCursor(scope, '')).toBeNull();
  });
});
