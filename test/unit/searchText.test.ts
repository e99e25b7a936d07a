import { describe, expect, it } from 'vitest';
import { decodeSearchCursor, encodeSearchCursor, searchScopeKey } from '../../src/history/searchCursor.ts';
import { matchRanges, searchSnippet, SNIPPET_LENGTH } from '../../src/history/searchSnippet.ts';
import { indexLexemes, MAX_QUERY_LENGTH, MAX_WORD_LENGTH, parseSearchQuery, type SearchQuery, searchVector, textRuns } from '../../src/history/searchText.ts';

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

  it('writes a tsvector literal with the scope lexeme first', () => {
    expect(searchVector(CONV, 'GraphQL 分页')).toBe(`'#${CONV}' 'graphql':1 '分页':2 '页':3`);
  });

  it('writes an empty text as the scope lexeme alone', () => {
    expect(searchVector(CONV, '👍')).toBe(`'#${CONV}'`);
  });
});

describe('Search tokenizer: queries', () => {
  it('ANDs Latin words', () => {
    expect(queryOf('Review PR').tsquery).toBe(`'review' & 'pr'`);
  });

  it('makes a CJK run of two characters one bigram, and a longer one the phrase of its bigrams', () => {
    expect(queryOf('消息').tsquery).toBe(`'消息'`);
    expect(queryOf('消息漫游').tsquery).toBe(`('消息' <-> '息漫' <-> '漫游')`);
  });

  it('makes a one-character CJK query a prefix match', () => {
    expect(queryOf('游').tsquery).toBe(`'游':*`);
  });

  it('parses mixed text into words and runs', () => {
    expect(queryOf('GraphQL 游标分页').tsquery).toBe(`'graphql' & ('游标' <-> '标分' <-> '分页')`);
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

  it('never lets a query lexeme reach a scope lexeme or break out of its quotes', () => {
    expect(queryOf(`#${CONV}`).tsquery).not.toContain('#');
    expect(queryOf(`it's a \\ test`).tsquery).toBe(`'it' & 's' & 'a' & 'test'`);
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
