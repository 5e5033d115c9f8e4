import { describe, expect, it } from '@jest/globals';
import { narrowScopes, type Conditions, type Scope } from './find-page.js';

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
