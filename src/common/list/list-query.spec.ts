import { describe, expect, it } from '@jest/globals';
import { ApiException } from '../errors/api-exception.js';
import { defineFields } from './field-table.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, parseListQuery, parseReadParams, parseReadQuery, rejectQuery, searchMatch, type ListSpec } from './list-query.js';

/** The entity of a throwaway resource: the columns its field table may name. */
class Widget {
  id: number;
  title: string;
  status: string;
  owner_id: number;
  name: string;
  created_at: Date;
}

/** A small field table in the shape of `todos.resource.ts`: one filter of each type, a link column. */
const WIDGET_FIELDS = defineFields<Widget>()({
  alias: 'w',
  fields: {
    title: { column: 'title', sort: true },
    status: { column: 'status', filter: { type: 'enum', values: ['open', 'closed'], description: 'Widgets in this status.', example: 'open' } },
    owner: { column: 'owner_id', filter: { type: 'int', description: 'Widgets of this user id.', example: 1 } },
    created_at: { column: 'created_at', sort: true },
    name: { column: 'name', select: false, filter: { type: 'string', description: 'Widgets with this name.', example: 'gear' } },
  },
  links: ['owner_id'],
});

const ID_ASC = { field: 'id', column: 'w.id', direction: 'ASC' };

/** Runs `fn` and returns the ApiException it throws; fails the test when it throws nothing else. */
function thrown(fn: () => unknown): ApiException {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiException) return error;
    throw error;
  }
  throw new Error('expected an ApiException, nothing was thrown');
}

/** Asserts a 400 `bad_request` with exactly one detail and that detail as the message. */
function expectSingleProblem(error: ApiException, field: string, message: string): void {
  expect(error.getStatus()).toBe(400);
  expect(error.code).toBe('bad_request');
  expect(error.message).toBe(message);
  expect(error.details).toEqual([{ field, message }]);
}

describe('parseListQuery', () => {
  describe('defaults', () => {
    it('pages with page 1, size 20, sorted by id ascending, no filters, all fields', () => {
      const query = parseListQuery({}, WIDGET_FIELDS);
      expect(query).toEqual({
        style: 'page',
        page: 1,
        size: 20,
        offset: 0,
        limit: 20,
        sort: [ID_ASC],
        filters: {},
        fields: undefined,
        ranges: [],
        operators: [],
        count: 'exact',
        fingerprint: expect.any(String),
      });
      expect(query.fields).toBeUndefined();
    });

    it('uses the page-size limits of docs/limits.md#lists: default 20, maximum 100', () => {
      expect(DEFAULT_PAGE_SIZE).toBe(20);
      expect(MAX_PAGE_SIZE).toBe(100);
    });

    it('falls back to the column `id` for the tie-breaker when the spec does not map id', () => {
      const spec: ListSpec = { ...WIDGET_FIELDS, sortable: { title: 'w.title' } };
      expect(parseListQuery({ sort: 'title' }, spec).sort).toEqual([
        { field: 'title', column: 'w.title', direction: 'ASC' },
        { field: 'id', column: 'id', direction: 'ASC' },
      ]);
    });
  });

  describe('page and size', () => {
    it('turns page/size into offset/limit', () => {
      expect(parseListQuery({ page: '3', size: '10' }, WIDGET_FIELDS)).toMatchObject({ style: 'page', page: 3, size: 10, offset: 20, limit: 10 });
    });

    it('keeps the default size when only page is given, and page 1 when only size is given', () => {
      expect(parseListQuery({ page: '2' }, WIDGET_FIELDS)).toMatchObject({ style: 'page', page: 2, size: 20, offset: 20, limit: 20 });
      expect(parseListQuery({ size: '5' }, WIDGET_FIELDS)).toMatchObject({ style: 'page', page: 1, size: 5, offset: 0, limit: 5 });
    });

    it.each(['1', '100'])('accepts size=%s (the bounds)', (size) => {
      expect(parseListQuery({ size }, WIDGET_FIELDS).size).toBe(Number(size));
    });

    it('accepts a large page (a page past the end is not an error)', () => {
      expect(parseListQuery({ page: '1000000000', size: '1' }, WIDGET_FIELDS)).toMatchObject({ page: 1_000_000_000, offset: 999_999_999 });
    });

    it.each([
      ['page', '0', 'page must be an integer from 1 to 1000000000'],
      ['page', '-1', 'page must be an integer from 1 to 1000000000'],
      ['page', 'abc', 'page must be an integer from 1 to 1000000000'],
      ['page', '1.5', 'page must be an integer from 1 to 1000000000'],
      ['page', '', 'page must be an integer from 1 to 1000000000'],
      ['page', '01', 'page must be an integer from 1 to 1000000000'],
      ['page', ' 1', 'page must be an integer from 1 to 1000000000'],
      ['page', '1e2', 'page must be an integer from 1 to 1000000000'],
      ['page', '0x10', 'page must be an integer from 1 to 1000000000'],
      ['page', '1000000001', 'page must be an integer from 1 to 1000000000'],
      ['size', '0', 'size must be an integer from 1 to 100'],
      ['size', '101', 'size must be an integer from 1 to 100'],
      ['size', 'abc', 'size must be an integer from 1 to 100'],
      ['size', '1.5', 'size must be an integer from 1 to 100'],
      ['size', '-5', 'size must be an integer from 1 to 100'],
      ['offset', '-1', 'offset must be an integer from 0 to 2000000000'],
      ['offset', 'abc', 'offset must be an integer from 0 to 2000000000'],
      ['offset', '1.5', 'offset must be an integer from 0 to 2000000000'],
      ['limit', '0', 'limit must be an integer from 1 to 100'],
      ['limit', '101', 'limit must be an integer from 1 to 100'],
      ['limit', 'ten', 'limit must be an integer from 1 to 100'],
    ])('rejects %s=%j with 400 naming the field', (field, value, message) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ [field]: value }, WIDGET_FIELDS)),
        field,
        message,
      );
    });

    it.each(['page', 'size', 'offset', 'limit'])('rejects a repeated %s with 400', (field) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ [field]: ['1', '2'] }, WIDGET_FIELDS)),
        field,
        `${field} must be given once`,
      );
    });
  });

  describe('offset and limit', () => {
    it('normalises to page = floor(offset / limit) + 1 and size = limit', () => {
      expect(parseListQuery({ offset: '40', limit: '20' }, WIDGET_FIELDS)).toEqual({
        style: 'offset',
        offset: 40,
        limit: 20,
        page: 3,
        size: 20,
        sort: [ID_ASC],
        filters: {},
        fields: undefined,
        ranges: [],
        operators: [],
        count: 'exact',
        fingerprint: expect.any(String),
      });
      expect(parseListQuery({ offset: '45', limit: '20' }, WIDGET_FIELDS)).toMatchObject({ style: 'offset', offset: 45, limit: 20, page: 3, size: 20 });
      expect(parseListQuery({ offset: '19', limit: '20' }, WIDGET_FIELDS)).toMatchObject({ page: 1 });
      expect(parseListQuery({ offset: '7', limit: '1' }, WIDGET_FIELDS)).toMatchObject({ page: 8, size: 1 });
    });

    it('defaults limit to 20 when only offset is given, offset to 0 when only limit is given', () => {
      expect(parseListQuery({ offset: '0' }, WIDGET_FIELDS)).toMatchObject({ style: 'offset', offset: 0, limit: 20, page: 1, size: 20 });
      expect(parseListQuery({ offset: '60' }, WIDGET_FIELDS)).toMatchObject({ style: 'offset', offset: 60, limit: 20, page: 4, size: 20 });
      expect(parseListQuery({ limit: '100' }, WIDGET_FIELDS)).toMatchObject({ style: 'offset', offset: 0, limit: 100, page: 1, size: 100 });
    });

    it.each([
      [{ page: '1', offset: '0' }],
      [{ page: '1', limit: '10' }],
      [{ size: '10', offset: '0' }],
      [{ size: '10', limit: '10' }],
      [{ page: '2', size: '10', offset: '10', limit: '10' }],
    ])('rejects mixing paging styles (%j) with 400', (raw) => {
      expectSingleProblem(
        thrown(() => parseListQuery(raw, WIDGET_FIELDS)),
        'offset',
        'use either page/size or offset/limit, not both',
      );
    });
  });

  describe('sort', () => {
    it('parses `-created_at,title` and appends id as the last tie-breaker, descending like the first key', () => {
      expect(parseListQuery({ sort: '-created_at,title' }, WIDGET_FIELDS).sort).toEqual([
        { field: 'created_at', column: 'w.created_at', direction: 'DESC' },
        { field: 'title', column: 'w.title', direction: 'ASC' },
        { ...ID_ASC, direction: 'DESC' },
      ]);
    });

    it('appends id ascending after an ascending first key, whatever the later keys', () => {
      expect(parseListQuery({ sort: 'title,-created_at' }, WIDGET_FIELDS).sort.at(-1)).toEqual(ID_ASC);
      expect(parseListQuery({ sort: '-title' }, WIDGET_FIELDS).sort.at(-1)).toEqual({ ...ID_ASC, direction: 'DESC' });
    });

    it('trims blanks around terms', () => {
      expect(parseListQuery({ sort: ' title , -created_at ' }, WIDGET_FIELDS).sort).toEqual([
        { field: 'title', column: 'w.title', direction: 'ASC' },
        { field: 'created_at', column: 'w.created_at', direction: 'DESC' },
        ID_ASC,
      ]);
    });

    it.each([
      ['id', [ID_ASC]],
      ['-id', [{ field: 'id', column: 'w.id', direction: 'DESC' }]],
      [
        'title,-id',
        [
          { field: 'title', column: 'w.title', direction: 'ASC' },
          { field: 'id', column: 'w.id', direction: 'DESC' },
        ],
      ],
      [
        '-id,title',
        [
          { field: 'id', column: 'w.id', direction: 'DESC' },
          { field: 'title', column: 'w.title', direction: 'ASC' },
        ],
      ],
    ])('does not append a second id when the caller names it (sort=%s)', (sort, expected) => {
      const keys = parseListQuery({ sort }, WIDGET_FIELDS).sort;
      expect(keys).toEqual(expected);
      expect(keys.filter((key) => key.field === 'id')).toHaveLength(1);
    });

    it.each(['color', '-color', 'title,color'])('rejects an unknown field (sort=%s) with 400 listing the sortable fields', (sort) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ sort }, WIDGET_FIELDS)),
        'sort',
        'cannot sort by color; sortable: id, title, created_at',
      );
    });

    it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', '-valueOf'])(
      'rejects a name inherited from Object.prototype (sort=%s) as unknown',
      (sort) => {
        const error = thrown(() => parseListQuery({ sort }, WIDGET_FIELDS));
        expect(error.getStatus()).toBe(400);
        expect(error.details).toEqual([{ field: 'sort', message: `cannot sort by ${sort.replace(/^-/, '')}; sortable: id, title, created_at` }]);
      },
    );

    it('does not sort by a filter or a field that is not sortable', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ sort: 'owner' }, WIDGET_FIELDS)),
        'sort',
        'cannot sort by owner; sortable: id, title, created_at',
      );
    });

    it.each([['title,-title'], ['title,title'], ['-created_at,created_at']])('rejects a field named twice (sort=%s) with 400', (sort) => {
      const field = sort.split(',')[1].replace(/^-/, '');
      expectSingleProblem(
        thrown(() => parseListQuery({ sort }, WIDGET_FIELDS)),
        'sort',
        `${field} is named twice in sort`,
      );
    });

    it('rejects id named twice', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ sort: 'id,-id' }, WIDGET_FIELDS)),
        'sort',
        'id is named twice in sort',
      );
    });

    it.each(['', 'title,', ',title', 'title,,created_at', '-', ' , '])('rejects an empty term (sort=%j) with 400', (sort) => {
      const error = thrown(() => parseListQuery({ sort }, WIDGET_FIELDS));
      expect(error.getStatus()).toBe(400);
      expect(error.details?.length).toBeGreaterThan(0);
      for (const detail of error.details ?? []) expect(detail).toEqual({ field: 'sort', message: 'sort must not contain empty terms' });
    });

    it('rejects a repeated sort parameter with 400', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ sort: ['title', '-created_at'] }, WIDGET_FIELDS)),
        'sort',
        'sort must be given once',
      );
    });
  });

  describe('filters', () => {
    it('accepts an enumeration value', () => {
      expect(parseListQuery({ status: 'open' }, WIDGET_FIELDS).filters).toEqual({ status: ['open'] });
    });

    it('parses an int filter to a number', () => {
      const { filters } = parseListQuery({ owner: '7' }, WIDGET_FIELDS);
      expect(filters).toEqual({ owner: [7] });
      expect(typeof filters.owner[0]).toBe('number');
    });

    it.each([
      ['0', 0],
      ['2147483647', 2_147_483_647],
    ])('accepts owner=%s (int bounds)', (raw, value) => {
      expect(parseListQuery({ owner: raw }, WIDGET_FIELDS).filters).toEqual({ owner: [value] });
    });

    it('keeps a string filter as text', () => {
      expect(parseListQuery({ name: 'Ada Lovelace' }, WIDGET_FIELDS).filters).toEqual({ name: ['Ada Lovelace'] });
    });

    it('treats a repeated filter as "any of"', () => {
      expect(parseListQuery({ status: ['open', 'closed'], owner: ['1', '2'] }, WIDGET_FIELDS).filters).toEqual({ status: ['open', 'closed'], owner: [1, 2] });
    });

    it('collapses duplicate values', () => {
      expect(parseListQuery({ status: ['open', 'open', 'closed'], owner: ['3', '3'] }, WIDGET_FIELDS).filters).toEqual({
        status: ['open', 'closed'],
        owner: [3],
      });
    });

    it('combines filters with paging and sort', () => {
      expect(parseListQuery({ status: 'closed', page: '2', size: '5', sort: '-title' }, WIDGET_FIELDS)).toEqual({
        style: 'page',
        page: 2,
        size: 5,
        offset: 5,
        limit: 5,
        sort: [
          { field: 'title', column: 'w.title', direction: 'DESC' },
          { ...ID_ASC, direction: 'DESC' },
        ],
        filters: { status: ['closed'] },
        fields: undefined,
        ranges: [],
        operators: [],
        count: 'exact',
        fingerprint: expect.any(String),
      });
    });

    it.each(['finished', '', 'OPEN', ' open'])('rejects status=%j (not in the enumeration) with 400', (status) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ status }, WIDGET_FIELDS)),
        'status',
        'status must be one of open, closed',
      );
    });

    it.each(['abc', '-1', '1.5', '', '07', '2147483648', '1e3', ' 1'])('rejects owner=%j (not a non-negative integer) with 400', (owner) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ owner }, WIDGET_FIELDS)),
        'owner',
        'owner must be a non-negative integer',
      );
    });

    it('rejects an empty string filter with 400', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ name: '' }, WIDGET_FIELDS)),
        'name',
        'name must not be empty',
      );
    });

    it('rejects a repeated filter when one of its values is bad', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ status: ['open', 'bogus'] }, WIDGET_FIELDS)),
        'status',
        'status must be one of open, closed',
      );
    });

    it('rejects a structured (non-string) filter value with 400', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ name: [{ a: '1' }] }, WIDGET_FIELDS)),
        'name',
        'name must be a plain value',
      );
    });
  });

  describe('unknown parameters', () => {
    it.each(['color', 'access_token', 'Page', 'sort_by', 'fields[]'])('rejects %s with 400 naming it', (name) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ [name]: '1' }, WIDGET_FIELDS)),
        name,
        `unknown query parameter ${name}`,
      );
    });

    it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__'])('rejects %s (a name inherited from Object.prototype) with 400', (name) => {
      // JSON.parse makes even `__proto__` an own property, as Node's query-string parser does.
      const raw = JSON.parse(`{${JSON.stringify(name)}: "1"}`) as Record<string, unknown>;
      expect(Object.keys(raw)).toEqual([name]);
      expectSingleProblem(
        thrown(() => parseListQuery(raw, WIDGET_FIELDS)),
        name,
        `unknown query parameter ${name}`,
      );
    });

    it('names every unknown parameter', () => {
      const error = thrown(() => parseListQuery({ a: '1', b: '2', page: '1' }, WIDGET_FIELDS));
      expect(error.getStatus()).toBe(400);
      expect(error.message).toBe('the query string has invalid parameters');
      expect(error.details).toEqual([
        { field: 'a', message: 'unknown query parameter a' },
        { field: 'b', message: 'unknown query parameter b' },
      ]);
    });
  });

  describe('fields', () => {
    it('returns the requested fields in order', () => {
      expect(parseListQuery({ fields: 'title,status' }, WIDGET_FIELDS).fields).toEqual(['title', 'status']);
    });

    it('accepts id, alone or with others', () => {
      expect(parseListQuery({ fields: 'id' }, WIDGET_FIELDS).fields).toEqual(['id']);
      expect(parseListQuery({ fields: 'title,id' }, WIDGET_FIELDS).fields).toEqual(['title', 'id']);
    });

    it('trims blanks and collapses duplicates', () => {
      expect(parseListQuery({ fields: ' title , status,title' }, WIDGET_FIELDS).fields).toEqual(['title', 'status']);
    });

    it('rejects an unknown field with 400 listing the allowed ones', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ fields: 'title,secret,password' }, WIDGET_FIELDS)),
        'fields',
        'unknown field secret, password; allowed: id, title, status, owner, created_at',
      );
    });

    it.each(['', 'title,', ',title', 'title,,status'])('rejects an empty name (fields=%j) with 400', (fields) => {
      expectSingleProblem(
        thrown(() => parseListQuery({ fields }, WIDGET_FIELDS)),
        'fields',
        'fields must be a comma-separated list of field names',
      );
    });

    it('rejects a repeated fields parameter with 400', () => {
      expectSingleProblem(
        thrown(() => parseListQuery({ fields: ['title', 'status'] }, WIDGET_FIELDS)),
        'fields',
        'fields must be given once',
      );
    });
  });

  describe('several problems', () => {
    it('collects every problem in one 400 error', () => {
      const error = thrown(() =>
        parseListQuery({ color: 'red', page: '0', size: '500', sort: 'colour', status: 'bogus', owner: 'x', fields: 'secret' }, WIDGET_FIELDS),
      );
      expect(error.getStatus()).toBe(400);
      expect(error.code).toBe('bad_request');
      expect(error.message).toBe('the query string has invalid parameters');
      expect(error.details).toHaveLength(7);
      expect(error.details).toEqual(
        expect.arrayContaining([
          { field: 'color', message: 'unknown query parameter color' },
          { field: 'page', message: 'page must be an integer from 1 to 1000000000' },
          { field: 'size', message: 'size must be an integer from 1 to 100' },
          { field: 'sort', message: 'cannot sort by colour; sortable: id, title, created_at' },
          { field: 'status', message: 'status must be one of open, closed' },
          { field: 'owner', message: 'owner must be a non-negative integer' },
          { field: 'fields', message: 'unknown field secret; allowed: id, title, status, owner, created_at' },
        ]),
      );
    });

    it('reports mixed paging together with the bad values', () => {
      const error = thrown(() => parseListQuery({ page: 'x', limit: '0' }, WIDGET_FIELDS));
      expect(error.getStatus()).toBe(400);
      expect(error.details).toHaveLength(3);
      expect(error.details).toEqual(
        expect.arrayContaining([
          { field: 'offset', message: 'use either page/size or offset/limit, not both' },
          { field: 'page', message: 'page must be an integer from 1 to 1000000000' },
          { field: 'limit', message: 'limit must be an integer from 1 to 100' },
        ]),
      );
    });

    it('reports each bad sort term', () => {
      const error = thrown(() => parseListQuery({ sort: 'a,title,-title,,b' }, WIDGET_FIELDS));
      expect(error.details).toEqual([
        { field: 'sort', message: 'cannot sort by a; sortable: id, title, created_at' },
        { field: 'sort', message: 'title is named twice in sort' },
        { field: 'sort', message: 'sort must not contain empty terms' },
        { field: 'sort', message: 'cannot sort by b; sortable: id, title, created_at' },
      ]);
    });
  });
});

describe('parseListQuery: filter operators (docs/lists.md#filter-operators)', () => {
  const GADGETS = defineFields<Widget>()({
    alias: 'w',
    fields: {
      title: { column: 'title', operators: ['prefix', 'contains'] },
      status: {
        column: 'status',
        operators: ['ne', 'in'],
        filter: { type: 'enum', values: ['open', 'closed'], description: 'In this status.', example: 'open' },
      },
      owner: { column: 'owner_id', operators: ['in'], filter: { type: 'int', description: 'Of this user id.', example: 1 } },
      name: { column: 'name', operators: ['null'] },
    },
    links: ['owner_id'],
  });

  it('parses each operator to its type, in a canonical order (field, then operator)', () => {
    const query = parseListQuery(
      { 'title[contains]': '50%', 'owner[in]': '3,1,3', 'name[null]': 'false', 'title[prefix]': 'Ge', 'status[ne]': 'open' },
      GADGETS,
    );
    expect(query.operators).toEqual([
      { field: 'name', column: 'w.name', op: 'null', value: false },
      { field: 'owner', column: 'w.owner_id', op: 'in', value: [3, 1] },
      { field: 'status', column: 'w.status', op: 'ne', value: 'open' },
      { field: 'title', column: 'w.title', op: 'prefix', value: 'Ge' },
      { field: 'title', column: 'w.title', op: 'contains', value: '50%' },
    ]);
    expect(query.filters).toEqual({});
    // a repeated [in] adds up, as the comma-separated form
    expect(parseListQuery({ 'owner[in]': ['3', '1,2'] }, GADGETS).operators).toEqual([{ field: 'owner', column: 'w.owner_id', op: 'in', value: [3, 1, 2] }]);
  });

  it('binds the fingerprint (and so cursors) to the operators, and leaves it unchanged without them', () => {
    const plain = parseListQuery({}, GADGETS).fingerprint;
    const one = parseListQuery({ 'title[prefix]': 'a' }, GADGETS).fingerprint;
    const other = parseListQuery({ 'title[prefix]': 'b' }, GADGETS).fingerprint;
    expect(new Set([plain, one, other]).size).toBe(3);
    expect(parseListQuery({ 'title[prefix]': 'a' }, GADGETS).fingerprint).toBe(one);
  });

  it.each<[Record<string, string | string[]>, string, string]>([
    [{ 'title[ne]': 'x' }, 'title[ne]', 'title takes no ne filter; it takes: prefix, contains'],
    [{ 'name[prefix]': 'x' }, 'name[prefix]', 'name takes no prefix filter; it takes: null'],
    [{ 'status[gt]': 'x' }, 'status[gt]', 'status takes no range filter; this list has none'],
    [{ 'status[in]': 'open,' }, 'status[in]', 'status[in] must be a comma-separated list of values without empty entries'],
    [{ 'owner[in]': Array.from({ length: 101 }, (_, i) => i).join(',') }, 'owner[in]', 'owner[in] takes at most 100 values'],
    [{ 'name[null]': 'TRUE' }, 'name[null]', 'name[null] must be true or false'],
    [{ 'title[contains]': 'x'.repeat(201) }, 'title[contains]', 'title[contains] must be 1 to 200 characters'],
    [{ 'title[prefix]': ['a', 'b'] }, 'title[prefix]', 'title[prefix] must be given once'],
    [{ 'status[in]': ['open', 'nope'] }, 'status[in]', 'status[in] must be one of open, closed'],
  ])('%j → 400 naming the parameter', (raw, field, message) => {
    const error = thrown(() => parseListQuery(raw, GADGETS));
    expect(error.getStatus()).toBe(400);
    expect(error.details).toEqual([{ field, message }]);
  });

  it('refuses to declare ne or in on a field without an equality filter', () => {
    expect(() => defineFields<Widget>()({ alias: 'w', fields: { title: { column: 'title', operators: ['in'] } }, links: [] })).toThrow(
      'field table: title[in] needs the equality filter title',
    );
  });
});

describe('parseReadQuery', () => {
  const FIELDS = ['title', 'status'];

  it('returns undefined without fields', () => {
    expect(parseReadQuery({}, FIELDS)).toBeUndefined();
  });

  it('returns the requested fields, id allowed, duplicates collapsed', () => {
    expect(parseReadQuery({ fields: 'status' }, FIELDS)).toEqual(['status']);
    expect(parseReadQuery({ fields: 'id' }, FIELDS)).toEqual(['id']);
    expect(parseReadQuery({ fields: 'title,id,title' }, FIELDS)).toEqual(['title', 'id']);
  });

  it('rejects an unknown field with 400', () => {
    expectSingleProblem(
      thrown(() => parseReadQuery({ fields: 'title,owner' }, FIELDS)),
      'fields',
      'unknown field owner; allowed: id, title, status',
    );
  });

  it.each(['', 'title,'])('rejects an empty name (fields=%j) with 400', (fields) => {
    expectSingleProblem(
      thrown(() => parseReadQuery({ fields }, FIELDS)),
      'fields',
      'fields must be a comma-separated list of field names',
    );
  });

  it('rejects a repeated fields parameter', () => {
    expectSingleProblem(
      thrown(() => parseReadQuery({ fields: ['title', 'status'] }, FIELDS)),
      'fields',
      'fields must be given once',
    );
  });

  it.each(['page', 'sort', 'status', 'constructor'])('rejects any other parameter (%s) with 400 naming it', (name) => {
    const raw = JSON.parse(`{${JSON.stringify(name)}: "1"}`) as Record<string, unknown>;
    expectSingleProblem(
      thrown(() => parseReadQuery(raw, FIELDS)),
      name,
      `unknown query parameter ${name}`,
    );
  });

  it('collects every problem', () => {
    const error = thrown(() => parseReadQuery({ page: '1', fields: 'nope' }, FIELDS));
    expect(error.getStatus()).toBe(400);
    expect(error.message).toBe('the query string has invalid parameters');
    expect(error.details).toEqual([
      { field: 'page', message: 'unknown query parameter page' },
      { field: 'fields', message: 'unknown field nope; allowed: id, title, status' },
    ]);
  });
});

describe('rejectQuery', () => {
  it('accepts an empty query', () => {
    expect(() => rejectQuery({})).not.toThrow();
    expect(rejectQuery({})).toBeUndefined();
  });

  it('rejects one parameter with 400 naming it', () => {
    expectSingleProblem(
      thrown(() => rejectQuery({ fields: 'title' })),
      'fields',
      'unknown query parameter fields',
    );
  });

  it('rejects an empty-valued parameter too', () => {
    expectSingleProblem(
      thrown(() => rejectQuery({ debug: '' })),
      'debug',
      'unknown query parameter debug',
    );
  });

  it('names every parameter', () => {
    const error = thrown(() => rejectQuery({ a: '1', b: ['2', '3'] }));
    expect(error.getStatus()).toBe(400);
    expect(error.code).toBe('bad_request');
    expect(error.message).toBe('the query string has invalid parameters');
    expect(error.details).toEqual([
      { field: 'a', message: 'unknown query parameter a' },
      { field: 'b', message: 'unknown query parameter b' },
    ]);
  });
});

describe('searchMatch: q as an FTS5 query (docs/lists.md#full-text-search-q)', () => {
  it.each<[string, string]>([
    ['nestjs', '(("nestjs"))'],
    ['nestjs guide', '(("nestjs" AND "guide"))'],
    ['"query builder" typeorm', '(("query builder" AND "typeorm"))'],
    ['typeorm -prisma', '(("typeorm") NOT "prisma")'],
    ['a b or c', '(("a" AND "b")) OR (("c"))'],
    ['or a or or b or', '(("a")) OR (("b"))'],
    ['say "hi', '(("say" AND "hi"))'],
    ['NEAR(x y) title:z *', '(("NEAR(x" AND "y)" AND "title:z"))'],
    ['he said ""yes""', '(("he" AND "said" AND "yes"))'],
    ['a"b', '(("a" AND "b"))'],
    ['x -"a b"', '(("x") NOT "a b")'],
    ['"a ""b"', '(("a " AND "b"))'],
    ['q"uo"te', '(("q" AND "uo" AND "te"))'],
    ['it\'s "ok"', '(("it\'s" AND "ok"))'],
  ])('%s → %s', (text, match) => {
    expect(searchMatch(text)).toEqual({ match, terms: expect.any(Number) });
  });

  it('a quote always ends a word or a phrase: no term carries one into FTS5', () => {
    expect(searchMatch('-x ab"c')).toEqual({ match: '(("ab" AND "c") NOT "x")', terms: 3 });
    expect(searchMatch('x"y')).toEqual({ match: '(("x" AND "y"))', terms: 2 });
  });

  it.each<[string, string]>([
    ['', 'q must contain a word to search for (letters or digits)'],
    ['!!! & |', 'q must contain a word to search for (letters or digits)'],
    ['or or', 'q must contain a word to search for (letters or digits)'],
    ['-a', 'q must contain a word to search for in each alternative, not only -exclusions'],
    ['a or -b', 'q must contain a word to search for in each alternative, not only -exclusions'],
    [Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '), 'q has more than 32 terms'],
  ])('%j → %s', (text, problem) => {
    expect(searchMatch(text)).toEqual({ problem });
  });
});

describe('expand (docs/lists.md#expanding-related-resources-expand)', () => {
  const noop = async () => undefined;
  const GADGET_TABLE = {
    ...defineFields<Widget>()({
      alias: 'w',
      fields: { title: { column: 'title' }, owner: { column: 'owner_id' }, status: { column: 'status' } },
      links: ['owner_id'],
    }),
    expand: { owner: { expand: noop }, status: { expand: noop, nested: ['a', 'b', 'c', 'd'] } },
  };

  it('takes the declared paths, a nested one bringing its parent, parents first, each once', () => {
    expect(parseListQuery({ expand: 'status.b, owner,owner' }, GADGET_TABLE).expand).toEqual(['owner', 'status', 'status.b']);
    expect(parseReadParams({ expand: 'owner' }, GADGET_TABLE.selectable, GADGET_TABLE.expand)).toEqual({ expand: ['owner'] });
  });

  it('drops a path whose field fields leaves out: it is not returned', () => {
    expect(parseListQuery({ expand: 'owner,status.a', fields: 'title,status' }, GADGET_TABLE).expand).toEqual(['status', 'status.a']);
  });

  it.each<[Record<string, string | string[]>, string]>([
    [{ expand: 'nope' }, 'cannot expand nope; expandable: owner, status, status.a, status.b, status.c, status.d'],
    [{ expand: 'owner.x' }, 'cannot expand owner.x; expandable: owner, status, status.a, status.b, status.c, status.d'],
    [{ expand: 'owner,' }, 'expand must be a comma-separated list of paths'],
    [{ expand: 'status.a,status.b,status.c,status.d' }, 'expand takes at most 4 paths (a nested path counts its parent)'],
    [{ expand: ['owner', 'status'] }, 'expand must be given once'],
  ])('%j → 400 naming expand', (raw, message) => {
    const error = thrown(() => parseListQuery(raw, GADGET_TABLE));
    expect(error.details).toEqual([{ field: 'expand', message }]);
  });

  it('is an unknown parameter where nothing is expandable', () => {
    expect(thrown(() => parseListQuery({ expand: 'owner' }, WIDGET_FIELDS)).details).toEqual([{ field: 'expand', message: 'unknown query parameter expand' }]);
    expect(thrown(() => parseReadParams({ expand: 'owner' }, WIDGET_FIELDS.selectable)).details).toEqual([
      { field: 'expand', message: 'unknown query parameter expand' },
    ]);
  });
});
