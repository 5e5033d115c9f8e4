import { tieBreakerDirection, type ListQuery } from './list-query.js';

/** A relation link of a resource or envelope (SPEC §4): `rel` and a path `href`. */
export interface Link {
  rel: string;
  href: string;
}

/** What a service returns for a list: the page's items, the total over all pages, the query used. */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly total: number,
    readonly query: ListQuery,
  ) {}
}

/** The list envelope of SPEC §4. `offset`/`limit` appear only when the caller paged with them. */
export interface Envelope<T> {
  data: T[];
  page: number;
  size: number;
  total: number;
  offset?: number;
  limit?: number;
  links: Link[];
}

function queryString(query: ListQuery, paging: Record<string, number>): string {
  const params = new URLSearchParams();
  for (const [name, values] of Object.entries(query.filters)) for (const value of values) params.append(name, String(value));
  const last = query.sort.length - 1;
  // an `id` key equal to the implicit tie-breaker is left out: the link means the same without it
  const explicitSort = query.sort.filter((key, i) => !(i === last && key.field === 'id' && key.direction === tieBreakerDirection(query.sort.slice(0, last))));
  if (explicitSort.length > 0) params.set('sort', explicitSort.map((k) => (k.direction === 'DESC' ? '-' : '') + k.field).join(','));
  if (query.fields) params.set('fields', query.fields.join(','));
  for (const [name, value] of Object.entries(paging)) params.set(name, String(value));
  return params.toString().replace(/%2C/g, ',');
}

/**
 * Builds the envelope links `self`, `first`, `prev` (when not on the first page), `next` (when more
 * follow) and `last`, repeating the caller's filters, sort, fields and paging style. `path` is the
 * collection path, e.g. `/v1/todos`.
 */
export function pageLinks(path: string, query: ListQuery, total: number): Link[] {
  const lastIndex = Math.max(0, Math.ceil(total / query.limit) - 1);
  const at = (offset: number) =>
    `${path}?${queryString(query, query.style === 'offset' ? { offset, limit: query.limit } : { page: Math.floor(offset / query.limit) + 1, size: query.size })}`;
  const links: Link[] = [
    { rel: 'self', href: at(query.offset) },
    { rel: 'first', href: at(0) },
  ];
  if (query.offset > 0) links.push({ rel: 'prev', href: at(Math.max(0, Math.min(query.offset - query.limit, lastIndex * query.limit))) });
  if (query.offset + query.limit < total) links.push({ rel: 'next', href: at(query.offset + query.limit) });
  links.push({ rel: 'last', href: at(lastIndex * query.limit) });
  return links;
}

/** Turns a {@link Page} into the SPEC §4 envelope for the collection at `path`. */
export function toEnvelope<T>(page: Page<T>, path: string): Envelope<T> {
  const { query } = page;
  return {
    data: page.items,
    page: query.page,
    size: query.size,
    total: page.total,
    ...(query.style === 'offset' ? { offset: query.offset, limit: query.limit } : {}),
    links: pageLinks(path, query, page.total),
  };
}

/** Keeps only `id`, the requested `fields` and `links` of a resource object (SPEC §4 `fields`). */
export function pickFields<T extends object>(object: T, fields: readonly string[]): Partial<T> {
  const source = object as Record<string, unknown>;
  const out: Record<string, unknown> = { id: source.id };
  for (const field of fields) if (field in source) out[field] = source[field];
  if ('links' in source) out.links = source.links;
  return out as Partial<T>;
}
