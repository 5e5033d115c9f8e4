import { describe, expect, it } from '@jest/globals';
import { containsPattern, narrowScopes, operatorSql, prefixUpperBound, type Conditions, type Scope } from './find-page.js';

/** Filters as {@link Conditions}. */
const filters = (record: Record<string, Array<string | number>>): Conditions => new Map(Object.entries(record));
/** Scopes back as plain records, for readable expectations. */
const plain = (scopes: Conditions[]) => scopes.map((scope) => Object.fromEntries(scope));

const ARTICLE_READER: Scope[] = [{ 'a.status': 'published' }, { 'a.author_id': 7 }];

describe('narrowScopes (visibility folded into the equality filters)', () => {
  it('keeps every visible scope when nothing filters', () => {
    expect(plain(narrowScopes(ARTICLE_READER, filters({})))).toEqual([{ 'a.status': ['published'] }, { 'a.author_id': [7] }]);
  });

  it('leaves status = published alone for status=published: the own published ones lie within it', () => {
    expect(plain(narrowScopes(ARTICLE_READER, filters({ 'a.status': ['published'] })))).toEqual([{ 'a.status': ['published'] }]);
  });

  it('leaves only the own drafts for status=draft', () => {
    expect(plain(narrowScopes(ARTICLE_READER, filters({ 'a.status': ['draft'] })))).toEqual([{ 'a.author_id': [7], 'a.status': ['draft'] }]);
  });

  it('keeps both scopes for status=draft&status=published, each narrowed', () => {
    expect(plain(narrowScopes(ARTICLE_READER, filters({ 'a.status': ['draft', 'published'] })))).toEqual([
      { 'a.status': ['published'] },
      { 'a.author_id': [7], 'a.status': ['draft', 'published'] },
    ]);
  });

  it('leaves the own articles for author=me, and the other author’s published ones for author=other', () => {
    expect(plain(narrowScopes(ARTICLE_READER, filters({ 'a.author_id': [7] })))).toEqual([{ 'a.author_id': [7] }]);
    expect(plain(narrowScopes(ARTICLE_READER, filters({ 'a.author_id': [9] })))).toEqual([{ 'a.status': ['published'], 'a.author_id': [9] }]);
  });

  it('leaves nothing when a filter excludes every visible row', () => {
    expect(narrowScopes([{ 't.owner_id': 3 }], filters({ 't.owner_id': [4] }))).toEqual([]);
    expect(narrowScopes([{ 't.owner_id': [] }], filters({}))).toEqual([]);
  });

  it('treats undefined visibility as every row, narrowed by the filters alone', () => {
    expect(plain(narrowScopes(undefined, filters({})))).toEqual([{}]);
    expect(plain(narrowScopes(undefined, filters({ 'a.status': ['draft'] })))).toEqual([{ 'a.status': ['draft'] }]);
  });

  it('drops a scope within another and keeps the first of two equal ones', () => {
    expect(plain(narrowScopes([{ x: [1] }, {}], filters({})))).toEqual([{}]);
    expect(plain(narrowScopes([{ x: 1 }, { x: [1] }], filters({})))).toEqual([{ x: [1] }]);
    expect(plain(narrowScopes([{ x: [1, 2] }, { x: 1, y: 2 }], filters({})))).toEqual([{ x: [1, 2] }]);
  });
});

describe('filter operators in SQL (docs/lists.md#filter-operators)', () => {
  it('bounds a prefix by its last code point incremented, in code point order', () => {
    expect(prefixUpperBound('ab')).toBe('ac');
    expect(prefixUpperBound('a')).toBe('b');
    expect(prefixUpperBound('Ä')).toBe('Å');
    // U+D7FF + 1 would be a lone surrogate: the next code point is U+E000
    expect(prefixUpperBound('x\ud7ff')).toBe('x\ue000');
    // an astral character is one code point, not two UTF-16 units
    expect(prefixUpperBound('😀')).toBe('😁');
    // trailing U+10FFFF carry into the code point before them; nothing left: no bound
    expect(prefixUpperBound('a\u{10ffff}\u{10ffff}')).toBe('b');
    expect(prefixUpperBound('\u{10ffff}')).toBeUndefined();
  });

  it('a string starts with the prefix exactly when it lies in [prefix, bound) in code point order', () => {
    const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    const words = ['ab', 'abc', 'ab\u{10ffff}', 'ac', 'aa\u{10ffff}', 'a', 'b', 'ab😀', 'abz', 'Ab'];
    for (const prefix of ['ab', 'a', 'ab\u{10ffff}']) {
      const end = prefixUpperBound(prefix);
      for (const word of words) {
        const inRange = byCodePoint(word, prefix) >= 0 && (end === undefined || byCodePoint(word, end) < 0);
        expect([prefix, word, inRange]).toEqual([prefix, word, word.startsWith(prefix)]);
      }
    }
  });

  it('escapes %, _ and the escape character itself in a contains pattern', () => {
    expect(containsPattern('50%_off!')).toBe('%50!%!_off!!%');
    expect(containsPattern("' OR 1=1 --")).toBe("%' OR 1=1 --%");
  });

  it('writes each operator as a parameterised condition for each database', () => {
    expect(operatorSql({ field: 'author', op: 'ne', value: 3 }, 'a.author_id', 'o_0', true)).toEqual({ sql: 'a.author_id <> :o_0', params: { o_0: 3 } });
    expect(operatorSql({ field: 'content', op: 'null', value: true }, 't.content', 'o_1', false)).toEqual({ sql: 't.content IS NULL', params: {} });
    expect(operatorSql({ field: 'content', op: 'null', value: false }, 't.content', 'o_1', false).sql).toBe('t.content IS NOT NULL');
    expect(operatorSql({ field: 'title', op: 'prefix', value: 'Bu' }, 't.title', 'o_2', true)).toEqual({
      sql: 't.title COLLATE "C" >= :o_2 AND t.title COLLATE "C" < :o_2_end',
      params: { o_2: 'Bu', o_2_end: 'Bv' },
    });
    expect(operatorSql({ field: 'title', op: 'prefix', value: 'Bu' }, 't.title', 'o_2', false).sql).toBe('t.title >= :o_2 AND t.title < :o_2_end');
    expect(operatorSql({ field: 'title', op: 'contains', value: 'a%' }, 't.title', 'o_3', true)).toEqual({
      sql: "lower(t.title) LIKE lower(:o_3) ESCAPE '!'",
      params: { o_3: '%a!%%' },
    });
    expect(operatorSql({ field: 'title', op: 'contains', value: 'a' }, 't.title', 'o_3', false).sql).toBe("t.title LIKE :o_3 ESCAPE '!'");
  });
});
