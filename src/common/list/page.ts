import { type CursorValue, encodeCursor } from './cursor.js';
import { type CountMode, type ListQuery, operatorValueText, tieBreakerDirection } from './list-query.js';

/** A relation link of a resource or envelope (docs/lists.md#the-envelope): `rel` and a path `href`. */
export interface Link {
  rel: string;
  href: string;
}

/**
 * Where a page lies among all matching rows: which count was applied, whether rows precede and
 * follow it, and the sort-key values of its first and last rows (for `prev_cursor`/`next_cursor`).
 */
export interface PageInfo {
  counted: CountMode;
  hasNext: boolean;
  hasPrev: boolean;
  first?: CursorValue[];
  last?: CursorValue[];
}

/**
 * What a service returns for a list: the page's items, the total over all pages (undefined with
 * `count=none`), the query used, and its {@link PageInfo} (derived from the total when not given).
 */
export class Page<T> {
  readonly info: PageInfo;

  constructor(
    readonly items: T[],
    readonly total: number | undefined,
    readonly query: ListQuery,
    info?: PageInfo,
  ) {
    this.info = info ?? { counted: 'exact', hasNext: total !== undefined && query.offset + query.limit < total, hasPrev: query.offset > 0 };
  }

  /** The same page with each item turned by `fn` (total, query and position kept). */
  map<U>(fn: (item: T) => U): Page<U> {
    return new Page(this.items.map(fn), this.total, this.query, this.info);
  }
}

/**
 * The list envelope (docs/lists.md#the-envelope). `offset`/`limit` appear only when the caller paged with them;
 * `page` not on cursor pages; `total` not with `count=none`; `next_cursor`/`prev_cursor` when a
 * page follows, resp. precedes.
 */
export interface Envelope<T> {
  data: T[];
  page?: number;
  size: number;
  total?: number;
  offset?: number;
  limit?: number;
  next_cursor?: string;
  prev_cursor?: string;
  links: Link[];
}

function queryString(query: ListQuery, paging: Record<string, number | string>): string {
  const params = new URLSearchParams();
  if (query.search) params.set('q', query.search.text);
  for (const [name, values] of Object.entries(query.filters)) for (const value of values) params.append(name, String(value));
  for (const range of query.ranges ?? []) params.append(`${range.field}[${range.op}]`, String(range.value));
  for (const filter of query.operators ?? []) params.append(`${filter.field}[${filter.op}]`, operatorValueText(filter));
  const last = query.sort.length - 1;
  // an `id` key equal to the implicit tie-breaker is left out: the link means the same without it
  const explicitSort = query.sort.filter((key, i) => !(i === last && key.field === 'id' && key.direction === tieBreakerDirection(query.sort.slice(0, last))));
  if (explicitSort.length > 0) params.set('sort', explicitSort.map((k) => (k.direction === 'DESC' ? '-' : '') + k.field).join(','));
  if (query.fields) params.set('fields', query.fields.join(','));
  if (query.expand) params.set('expand', query.expand.filter((path) => !query.expand?.some((other) => other.startsWith(`${path}.`))).join(','));
  for (const [name, value] of Object.entries(paging)) params.set(name, String(value));
  return params.toString().replace(/%2C/g, ',').replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%3A/g, ':');
}

/**
 * Builds the envelope links, repeating the caller's filters, sort, fields and paging style. `path`
 * is the collection path, e.g. `/v1/todos`; `total` undefined with `count=none`; `cursors` the
 * page's encoded `next`/`prev` cursors.
 * - page/offset paging: `self`, `first`, `prev` (when not on the first page), `next` (when more
 *   follow) and `last` (only when `total` is known);
 * - cursor paging: `self`, `first` (the first page, without cursor), `prev` and `next` with the
 *   page's cursors when there are such pages.
 */
export function pageLinks(path: string, query: ListQuery, total: number | undefined, cursors: { next?: string; prev?: string; self?: string } = {}): Link[] {
  if (query.style === 'cursor') {
    const sizeParam = query.sizeParam ?? 'size';
    const at = (cursor?: string) => `${path}?${queryString(query, cursor === undefined ? { [sizeParam]: query.limit } : { cursor, [sizeParam]: query.limit })}`;
    const links: Link[] = [
      { rel: 'self', href: at(cursors.self) },
      { rel: 'first', href: at() },
    ];
    if (cursors.prev) links.push({ rel: 'prev', href: at(cursors.prev) });
    if (cursors.next) links.push({ rel: 'next', href: at(cursors.next) });
    return links;
  }
  const at = (offset: number) =>
    `${path}?${queryString(query, query.style === 'offset' ? { offset, limit: query.limit } : { page: Math.floor(offset / query.limit) + 1, size: query.size })}`;
  const links: Link[] = [
    { rel: 'self', href: at(query.offset) },
    { rel: 'first', href: at(0) },
  ];
  if (total === undefined) {
    if (query.offset > 0) links.push({ rel: 'prev', href: at(Math.max(0, query.offset - query.limit)) });
    if (cursors.next !== undefined) links.push({ rel: 'next', href: at(query.offset + query.limit) });
    return links;
  }
  const lastIndex = Math.max(0, Math.ceil(total / query.limit) - 1);
  if (query.offset > 0) links.push({ rel: 'prev', href: at(Math.max(0, Math.min(query.offset - query.limit, lastIndex * query.limit))) });
  if (query.offset + query.limit < total) links.push({ rel: 'next', href: at(query.offset + query.limit) });
  links.push({ rel: 'last', href: at(lastIndex * query.limit) });
  return links;
}

/**
 * Turns a {@link Page} into the list envelope (docs/lists.md#the-envelope) for the collection at `path`, with its cursors
 * signed by `key` ({@link encodeCursor}): `next_cursor` from the last row when a page follows,
 * `prev_cursor` from the first row when one precedes.
 */
export function toEnvelope<T>(page: Page<T>, path: string, key?: Buffer): Envelope<T> {
  const { query, info } = page;
  const sign = (direction: 'after' | 'before', values: CursorValue[] | undefined) =>
    key && values && query.fingerprint ? encodeCursor(key, query.fingerprint, { direction, values }) : undefined;
  const next = info.hasNext ? sign('after', info.last) : undefined;
  const prev = info.hasPrev ? sign('before', info.first) : undefined;
  const self = query.cursor && key ? encodeCursor(key, query.fingerprint, query.cursor) : undefined;
  return {
    data: page.items,
    ...(query.style !== 'cursor' ? { page: query.page } : {}),
    size: query.size,
    ...(page.total !== undefined ? { total: page.total } : {}),
    ...(query.style === 'offset' ? { offset: query.offset, limit: query.limit } : {}),
    ...(next !== undefined ? { next_cursor: next } : {}),
    ...(prev !== undefined ? { prev_cursor: prev } : {}),
    links: pageLinks(path, query, page.total, { next, prev, self }),
  };
}

/** Keeps only `id`, the requested `fields` and `links` of a resource object (docs/lists.md#sparse-fieldsets-fields). */
export function pickFields<T extends object>(object: T, fields: readonly string[]): Partial<T> {
  const source = object as Record<string, unknown>;
  const out: Record<string, unknown> = { id: source.id };
  for (const field of fields) if (field in source) out[field] = source[field];
  if ('links' in source) out.links = source.links;
  return out as Partial<T>;
}
