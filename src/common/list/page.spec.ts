import { parse } from 'node:querystring';
import { describe, expect, it } from '@jest/globals';
import { defineFields } from './field-table.js';
import { parseListQuery, type ListQuery } from './list-query.js';
import { Page, pageLinks, pickFields, toEnvelope, type Link } from './page.js';

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

const PATH = '/v1/widgets';

/** The query a request with this (Express "simple" parser) query string produces. */
const q = (raw: Record<string, string | string[]>): ListQuery => parseListQuery(raw, WIDGET_FIELDS);

const rels = (links: Link[]) => links.map((link) => link.rel);
const href = (links: Link[], rel: string) => links.find((link) => link.rel === rel)?.href;

describe('pageLinks, page/size style', () => {
  it('links self, first, prev, next and last in the middle of the list', () => {
    expect(pageLinks(PATH, q({ page: '2', size: '20' }), 57)).toEqual([
      { rel: 'self', href: '/v1/widgets?page=2&size=20' },
      { rel: 'first', href: '/v1/widgets?page=1&size=20' },
      { rel: 'prev', href: '/v1/widgets?page=1&size=20' },
      { rel: 'next', href: '/v1/widgets?page=3&size=20' },
      { rel: 'last', href: '/v1/widgets?page=3&size=20' },
    ]);
  });

  it('writes the default paging explicitly and has no prev on the first page', () => {
    expect(pageLinks(PATH, q({}), 57)).toEqual([
      { rel: 'self', href: '/v1/widgets?page=1&size=20' },
      { rel: 'first', href: '/v1/widgets?page=1&size=20' },
      { rel: 'next', href: '/v1/widgets?page=2&size=20' },
      { rel: 'last', href: '/v1/widgets?page=3&size=20' },
    ]);
  });

  it('has no next on the last page', () => {
    const links = pageLinks(PATH, q({ page: '3' }), 57);
    expect(rels(links)).toEqual(['self', 'first', 'prev', 'last']);
    expect(href(links, 'prev')).toBe('/v1/widgets?page=2&size=20');
    expect(href(links, 'last')).toBe('/v1/widgets?page=3&size=20');
  });

  it('has no next when the total is an exact multiple of the size', () => {
    const links = pageLinks(PATH, q({ page: '3', size: '20' }), 60);
    expect(rels(links)).toEqual(['self', 'first', 'prev', 'last']);
    expect(href(links, 'last')).toBe('/v1/widgets?page=3&size=20');
  });

  it('has only self, first and last when everything fits on one page', () => {
    expect(pageLinks(PATH, q({ size: '100' }), 100)).toEqual([
      { rel: 'self', href: '/v1/widgets?page=1&size=100' },
      { rel: 'first', href: '/v1/widgets?page=1&size=100' },
      { rel: 'last', href: '/v1/widgets?page=1&size=100' },
    ]);
  });

  it('points last at page 1 when the total is 0', () => {
    expect(pageLinks(PATH, q({}), 0)).toEqual([
      { rel: 'self', href: '/v1/widgets?page=1&size=20' },
      { rel: 'first', href: '/v1/widgets?page=1&size=20' },
      { rel: 'last', href: '/v1/widgets?page=1&size=20' },
    ]);
  });

  it('points prev at the last page when the page is past the end', () => {
    expect(pageLinks(PATH, q({ page: '10', size: '20' }), 57)).toEqual([
      { rel: 'self', href: '/v1/widgets?page=10&size=20' },
      { rel: 'first', href: '/v1/widgets?page=1&size=20' },
      { rel: 'prev', href: '/v1/widgets?page=3&size=20' },
      { rel: 'last', href: '/v1/widgets?page=3&size=20' },
    ]);
  });

  it('points prev at the previous page when the page is just past the end', () => {
    const links = pageLinks(PATH, q({ page: '4', size: '20' }), 60);
    expect(rels(links)).toEqual(['self', 'first', 'prev', 'last']);
    expect(href(links, 'prev')).toBe('/v1/widgets?page=3&size=20');
  });

  it('points prev at page 1 when the page is past the end of an empty list', () => {
    expect(pageLinks(PATH, q({ page: '5' }), 0)).toEqual([
      { rel: 'self', href: '/v1/widgets?page=5&size=20' },
      { rel: 'first', href: '/v1/widgets?page=1&size=20' },
      { rel: 'prev', href: '/v1/widgets?page=1&size=20' },
      { rel: 'last', href: '/v1/widgets?page=1&size=20' },
    ]);
  });
});

describe('pageLinks, offset/limit style', () => {
  it('links with offset and limit, never page and size', () => {
    expect(pageLinks(PATH, q({ offset: '20', limit: '20' }), 57)).toEqual([
      { rel: 'self', href: '/v1/widgets?offset=20&limit=20' },
      { rel: 'first', href: '/v1/widgets?offset=0&limit=20' },
      { rel: 'prev', href: '/v1/widgets?offset=0&limit=20' },
      { rel: 'next', href: '/v1/widgets?offset=40&limit=20' },
      { rel: 'last', href: '/v1/widgets?offset=40&limit=20' },
    ]);
  });

  it('keeps the offset style when only limit is given', () => {
    expect(pageLinks(PATH, q({ limit: '10' }), 25)).toEqual([
      { rel: 'self', href: '/v1/widgets?offset=0&limit=10' },
      { rel: 'first', href: '/v1/widgets?offset=0&limit=10' },
      { rel: 'next', href: '/v1/widgets?offset=10&limit=10' },
      { rel: 'last', href: '/v1/widgets?offset=20&limit=10' },
    ]);
  });

  it('steps by limit from an offset that is not a multiple of it, prev never below 0', () => {
    expect(pageLinks(PATH, q({ offset: '10', limit: '20' }), 57)).toEqual([
      { rel: 'self', href: '/v1/widgets?offset=10&limit=20' },
      { rel: 'first', href: '/v1/widgets?offset=0&limit=20' },
      { rel: 'prev', href: '/v1/widgets?offset=0&limit=20' },
      { rel: 'next', href: '/v1/widgets?offset=30&limit=20' },
      { rel: 'last', href: '/v1/widgets?offset=40&limit=20' },
    ]);
  });

  it('has no next when offset + limit reaches the total', () => {
    const links = pageLinks(PATH, q({ offset: '37', limit: '20' }), 57);
    expect(rels(links)).toEqual(['self', 'first', 'prev', 'last']);
    expect(href(links, 'prev')).toBe('/v1/widgets?offset=17&limit=20');
  });

  it('points prev at the last page when the offset is past the end', () => {
    expect(pageLinks(PATH, q({ offset: '100', limit: '20' }), 57)).toEqual([
      { rel: 'self', href: '/v1/widgets?offset=100&limit=20' },
      { rel: 'first', href: '/v1/widgets?offset=0&limit=20' },
      { rel: 'prev', href: '/v1/widgets?offset=40&limit=20' },
      { rel: 'last', href: '/v1/widgets?offset=40&limit=20' },
    ]);
  });

  it('links offset 0 as first and last when the total is 0', () => {
    expect(pageLinks(PATH, q({ offset: '0', limit: '5' }), 0)).toEqual([
      { rel: 'self', href: '/v1/widgets?offset=0&limit=5' },
      { rel: 'first', href: '/v1/widgets?offset=0&limit=5' },
      { rel: 'last', href: '/v1/widgets?offset=0&limit=5' },
    ]);
  });
});

describe('pageLinks repeats filters, sort and fields', () => {
  it('puts them in every link, repeated filters as repeated parameters', () => {
    const query = q({ status: ['open', 'closed'], owner: '7', sort: '-created_at,title', fields: 'title,status', page: '2', size: '10' });
    const links = pageLinks(PATH, query, 30);
    expect(links).toEqual([
      { rel: 'self', href: '/v1/widgets?status=open&status=closed&owner=7&sort=-created_at,title&fields=title,status&page=2&size=10' },
      { rel: 'first', href: '/v1/widgets?status=open&status=closed&owner=7&sort=-created_at,title&fields=title,status&page=1&size=10' },
      { rel: 'prev', href: '/v1/widgets?status=open&status=closed&owner=7&sort=-created_at,title&fields=title,status&page=1&size=10' },
      { rel: 'next', href: '/v1/widgets?status=open&status=closed&owner=7&sort=-created_at,title&fields=title,status&page=3&size=10' },
      { rel: 'last', href: '/v1/widgets?status=open&status=closed&owner=7&sort=-created_at,title&fields=title,status&page=3&size=10' },
    ]);
  });

  it('repeats them in the offset style too', () => {
    const links = pageLinks(PATH, q({ status: 'open', sort: 'title', offset: '5', limit: '5' }), 12);
    expect(links).toEqual([
      { rel: 'self', href: '/v1/widgets?status=open&sort=title&offset=5&limit=5' },
      { rel: 'first', href: '/v1/widgets?status=open&sort=title&offset=0&limit=5' },
      { rel: 'prev', href: '/v1/widgets?status=open&sort=title&offset=0&limit=5' },
      { rel: 'next', href: '/v1/widgets?status=open&sort=title&offset=10&limit=5' },
      { rel: 'last', href: '/v1/widgets?status=open&sort=title&offset=10&limit=5' },
    ]);
  });

  it('leaves out the implicit id tie-breaker but keeps an explicit id in another direction', () => {
    expect(href(pageLinks(PATH, q({ sort: 'title' }), 1), 'self')).toBe('/v1/widgets?sort=title&page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: '-title' }), 1), 'self')).toBe('/v1/widgets?sort=-title&page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: '-title,-id' }), 1), 'self')).toBe('/v1/widgets?sort=-title&page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: '-title,id' }), 1), 'self')).toBe('/v1/widgets?sort=-title,id&page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: 'id' }), 1), 'self')).toBe('/v1/widgets?page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: '-id' }), 1), 'self')).toBe('/v1/widgets?sort=-id&page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: '-id,title' }), 1), 'self')).toBe('/v1/widgets?sort=-id,title&page=1&size=20');
    expect(href(pageLinks(PATH, q({ sort: 'title,-id' }), 1), 'self')).toBe('/v1/widgets?sort=title,-id&page=1&size=20');
  });

  it('keeps fields=id', () => {
    expect(href(pageLinks(PATH, q({ fields: 'id' }), 1), 'self')).toBe('/v1/widgets?fields=id&page=1&size=20');
  });

  it('percent-encodes filter values', () => {
    const links = pageLinks(PATH, q({ name: 'a b&c=d?é' }), 1);
    expect(href(links, 'self')).toBe('/v1/widgets?name=a+b%26c%3Dd%3F%C3%A9&page=1&size=20');
  });

  it.each<Record<string, string | string[]>>([
    { status: ['open', 'closed'], owner: ['3', '4'], sort: '-created_at,title', fields: 'title,id', page: '2', size: '3' },
    { name: 'comma, ampersand & percent %2C', sort: '-id', offset: '7', limit: '3' },
    { name: 'plus+sign', fields: 'owner' },
  ])('produces links that parse back to the same query (%j)', (raw) => {
    const query = q(raw);
    for (const link of pageLinks(PATH, query, 40)) {
      const [path, search] = link.href.split('?');
      expect(path).toBe(PATH);
      const again = parseListQuery(parse(search) as Record<string, string | string[]>, WIDGET_FIELDS);
      expect(again.style).toBe(query.style);
      expect(again.size).toBe(query.size);
      expect(again.sort).toEqual(query.sort);
      expect(again.filters).toEqual(query.filters);
      expect(again.fields).toEqual(query.fields);
    }
  });
});

describe('toEnvelope', () => {
  const items = [{ id: 21 }, { id: 22 }];

  it('wraps a page/size page without offset and limit', () => {
    const envelope = toEnvelope(new Page(items, 57, q({ page: '2', size: '20' })), PATH);
    expect(envelope).toEqual({
      data: items,
      page: 2,
      size: 20,
      total: 57,
      links: pageLinks(PATH, q({ page: '2', size: '20' }), 57),
    });
    expect(envelope).not.toHaveProperty('offset');
    expect(envelope).not.toHaveProperty('limit');
    expect(envelope.data).toBe(items);
  });

  it('adds offset and limit, with the derived page and size, in the offset style', () => {
    const envelope = toEnvelope(new Page(items, 57, q({ offset: '45', limit: '20' })), PATH);
    expect(envelope).toEqual({
      data: items,
      page: 3,
      size: 20,
      total: 57,
      offset: 45,
      limit: 20,
      links: [
        { rel: 'self', href: '/v1/widgets?offset=45&limit=20' },
        { rel: 'first', href: '/v1/widgets?offset=0&limit=20' },
        { rel: 'prev', href: '/v1/widgets?offset=25&limit=20' },
        { rel: 'last', href: '/v1/widgets?offset=40&limit=20' },
      ],
    });
  });

  it('returns empty data with the true total for a page past the end', () => {
    const envelope = toEnvelope(new Page([], 57, q({ page: '9' })), PATH);
    expect(envelope.data).toEqual([]);
    expect(envelope.total).toBe(57);
    expect(envelope.page).toBe(9);
    expect(rels(envelope.links)).toEqual(['self', 'first', 'prev', 'last']);
    expect(href(envelope.links, 'prev')).toBe('/v1/widgets?page=3&size=20');
  });

  it('wraps an empty list', () => {
    expect(toEnvelope(new Page([], 0, q({})), PATH)).toEqual({
      data: [],
      page: 1,
      size: 20,
      total: 0,
      links: [
        { rel: 'self', href: '/v1/widgets?page=1&size=20' },
        { rel: 'first', href: '/v1/widgets?page=1&size=20' },
        { rel: 'last', href: '/v1/widgets?page=1&size=20' },
      ],
    });
  });
});

describe('pickFields', () => {
  const widget = {
    id: 5,
    title: 'Gear',
    status: 'open',
    content: null,
    owner: 2,
    links: [{ rel: 'self', href: '/v1/widgets/5' }],
  };

  it('keeps id, the requested fields and links', () => {
    expect(pickFields(widget, ['title'])).toEqual({ id: 5, title: 'Gear', links: widget.links });
  });

  it('keeps the requested fields in the order asked, id first and links last', () => {
    expect(Object.keys(pickFields(widget, ['owner', 'status']))).toEqual(['id', 'owner', 'status', 'links']);
  });

  it('keeps null values', () => {
    expect(pickFields(widget, ['content'])).toEqual({ id: 5, content: null, links: widget.links });
  });

  it('returns only id and links for fields=id or no fields', () => {
    expect(pickFields(widget, ['id'])).toEqual({ id: 5, links: widget.links });
    expect(pickFields(widget, [])).toEqual({ id: 5, links: widget.links });
  });

  it('leaves out a field the object does not have (no undefined key)', () => {
    const picked = pickFields(widget, ['title', 'created_at']);
    expect(picked).toEqual({ id: 5, title: 'Gear', links: widget.links });
    expect(picked).not.toHaveProperty('created_at');
  });

  it('adds no links key to an object without links', () => {
    const picked = pickFields({ id: 1, title: 'x' }, ['title']);
    expect(picked).toEqual({ id: 1, title: 'x' });
    expect(picked).not.toHaveProperty('links');
  });

  it('does not change the source object', () => {
    const copy = structuredClone(widget);
    pickFields(widget, ['title']);
    expect(widget).toEqual(copy);
  });
});
