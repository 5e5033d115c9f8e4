import { badRequest, type ErrorDetail } from '../errors/api-exception.js';
import { parsePositiveInt } from '../pipes/parse-id.pipe.js';

/** One filter of a list (SPEC §4 equality filters): how its values are parsed, what it compares. */
export type FilterSpec = {
  type: 'int' | 'string' | 'enum';
  /** Allowed values for `enum`. */
  values?: readonly string[];
  /** Shown in the OpenAPI document. */
  description: string;
  example: string | number;
} & (
  | {
      /** Database column (`alias.column`) compared for equality. */
      column: string;
      condition?: undefined;
    }
  | {
      column?: undefined;
      /**
       * A custom SQL condition instead of equality on a column, for filters across a relation
       * (e.g. articles carrying a tag): takes the parameter name, to be used as `(:...name)`, the
       * list of accepted values.
       */
      condition: (param: string) => string;
    }
);

/**
 * A collection's list grammar (SPEC §4) as the parser and {@link findPage} read it: which fields
 * sort (API name → `alias.column`), which filter, which may be picked with `fields`, the columns
 * each needs. Derived from the resource's field table by `defineFields` (field-table.ts), never
 * written by hand.
 */
export interface ListSpec {
  /** Sort key → `alias.column`; `id` first. */
  sortable: Readonly<Record<string, string>>;
  filters: Readonly<Record<string, FilterSpec>>;
  /** Fields of the response object that `fields` may name (besides `id`), in documented order. */
  selectable: readonly string[];
  /** Query-builder alias of the table, e.g. `t`. */
  alias: string;
  /**
   * Columns to select for each response field (raw result keys are the column names); `id` and
   * `always` are selected in any case (the columns the links need).
   */
  columns: Readonly<Record<string, readonly string[]>>;
  always: readonly string[];
}

export interface SortKey {
  field: string;
  column: string;
  direction: 'ASC' | 'DESC';
}

/**
 * A parsed, validated list query. Both paging styles are normalised: `offset`/`limit` are always
 * set; `style` says which one the caller used, so links repeat it.
 */
export interface ListQuery {
  style: 'page' | 'offset';
  page: number;
  size: number;
  offset: number;
  limit: number;
  /**
   * Requested keys, then `id` as the last tie-breaker (unless `id` was named), in the direction of
   * the first key ({@link tieBreakerDirection}).
   */
  sort: SortKey[];
  /** Filter name → accepted values ("any of"); values parsed to the field's type. */
  filters: Record<string, Array<string | number>>;
  /** Requested fields, or undefined for all. */
  fields?: string[];
}

/** Default and maximum page size (SPEC §7). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** Largest accepted `page` and `offset`, and the range of an integer filter value. */
export const MAX_PAGE = 1_000_000_000;
export const MAX_OFFSET = 2_000_000_000;
export const MAX_FILTER_INT = 2_147_483_647;

const PAGING = ['page', 'size', 'offset', 'limit'];

type RawQuery = Record<string, unknown>;

/**
 * Direction of the implicit `id` tie-breaker after the given sort keys (SPEC §4 "`id` is always
 * the last tie-breaker"): the direction of the first key, ascending when there is none. So
 * `sort=-created_at` orders by `created_at DESC, id DESC`, which one `(…, created_at, id)` index
 * serves read backwards.
 */
export function tieBreakerDirection(keys: readonly SortKey[]): 'ASC' | 'DESC' {
  return keys[0]?.direction ?? 'ASC';
}

function single(query: RawQuery, name: string, problems: ErrorDetail[]): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    problems.push({ field: name, message: `${name} must be given once` });
    return undefined;
  }
  return value;
}

function integer(query: RawQuery, name: string, min: number, max: number, problems: ErrorDetail[]): number | undefined {
  const text = single(query, name, problems);
  if (text === undefined) return undefined;
  const value = /^(0|[1-9][0-9]{0,9})$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) {
    problems.push({ field: name, message: `${name} must be an integer from ${min} to ${max}` });
    return undefined;
  }
  return value;
}

function parseFields(query: RawQuery, allowed: readonly string[], problems: ErrorDetail[]): string[] | undefined {
  const text = single(query, 'fields', problems);
  if (text === undefined) return undefined;
  const names = text.split(',').map((f) => f.trim());
  const unknown = names.filter((f) => f !== 'id' && !allowed.includes(f));
  if (names.some((f) => f === '')) problems.push({ field: 'fields', message: 'fields must be a comma-separated list of field names' });
  else if (unknown.length > 0) problems.push({ field: 'fields', message: `unknown field ${unknown.join(', ')}; allowed: id, ${allowed.join(', ')}` });
  return [...new Set(names)];
}

function parseFilterValue(name: string, spec: FilterSpec, raw: string, problems: ErrorDetail[]): string | number | undefined {
  if (spec.type === 'int') {
    const value = /^(0|[1-9][0-9]{0,9})$/.test(raw) ? Number(raw) : NaN;
    if (!(value >= 0 && value <= MAX_FILTER_INT)) {
      problems.push({ field: name, message: `${name} must be a non-negative integer` });
      return undefined;
    }
    return value;
  }
  if (spec.type === 'enum' && !spec.values?.includes(raw)) {
    problems.push({ field: name, message: `${name} must be one of ${spec.values?.join(', ')}` });
    return undefined;
  }
  if (raw === '') {
    problems.push({ field: name, message: `${name} must not be empty` });
    return undefined;
  }
  return raw;
}

/**
 * Parses a collection's query string (SPEC §4): `page`/`size` or `offset`/`limit` (mixing → 400),
 * `sort` (`field`, `-field`, comma-separated, sortable fields only), equality filters (repeated
 * parameter = any of), `fields`; any other parameter → 400 naming it.
 * Takes Express's parsed query (`string | string[]` values) and the resource's field table ({@link ListSpec}).
 * @throws 400 `bad_request` with every problem in `details`.
 */
export function parseListQuery(query: RawQuery, spec: ListSpec): ListQuery {
  const problems: ErrorDetail[] = [];
  for (const name of Object.keys(query)) {
    if (!PAGING.includes(name) && name !== 'sort' && name !== 'fields' && !Object.hasOwn(spec.filters, name)) {
      problems.push({ field: name, message: `unknown query parameter ${name}` });
    }
  }
  const pageStyle = query.page !== undefined || query.size !== undefined;
  const offsetStyle = query.offset !== undefined || query.limit !== undefined;
  if (pageStyle && offsetStyle) {
    problems.push({ field: 'offset', message: 'use either page/size or offset/limit, not both' });
  }
  const page = integer(query, 'page', 1, MAX_PAGE, problems) ?? 1;
  const size = integer(query, 'size', 1, MAX_PAGE_SIZE, problems) ?? DEFAULT_PAGE_SIZE;
  const limit = integer(query, 'limit', 1, MAX_PAGE_SIZE, problems) ?? DEFAULT_PAGE_SIZE;
  const offset = integer(query, 'offset', 0, MAX_OFFSET, problems) ?? 0;

  const sort: SortKey[] = [];
  const sortText = single(query, 'sort', problems);
  if (sortText !== undefined) {
    const seen = new Set<string>();
    for (const part of sortText.split(',')) {
      const term = part.trim();
      const descending = term.startsWith('-');
      const field = descending ? term.slice(1) : term;
      if (!Object.hasOwn(spec.sortable, field)) {
        const allowed = Object.keys(spec.sortable).join(', ');
        problems.push({ field: 'sort', message: field === '' ? 'sort must not contain empty terms' : `cannot sort by ${field}; sortable: ${allowed}` });
      } else if (seen.has(field)) {
        problems.push({ field: 'sort', message: `${field} is named twice in sort` });
      } else {
        seen.add(field);
        sort.push({ field, column: spec.sortable[field], direction: descending ? 'DESC' : 'ASC' });
      }
    }
  }
  if (!sort.some((key) => key.field === 'id')) sort.push({ field: 'id', column: spec.sortable.id ?? 'id', direction: tieBreakerDirection(sort) });

  const filters: Record<string, Array<string | number>> = {};
  for (const [name, filterSpec] of Object.entries(spec.filters)) {
    const raw = query[name];
    if (raw === undefined) continue;
    const texts = Array.isArray(raw) ? raw : [raw];
    const values: Array<string | number> = [];
    for (const text of texts) {
      if (typeof text !== 'string') {
        problems.push({ field: name, message: `${name} must be a plain value` });
        continue;
      }
      const value = parseFilterValue(name, filterSpec, text, problems);
      if (value !== undefined && !values.includes(value)) values.push(value);
    }
    filters[name] = values;
  }
  const fields = parseFields(query, spec.selectable, problems);

  if (problems.length > 0) {
    throw badRequest(problems.length === 1 ? problems[0].message : 'the query string has invalid parameters', problems);
  }
  return offsetStyle
    ? { style: 'offset', offset, limit, page: Math.floor(offset / limit) + 1, size: limit, sort, filters, fields }
    : { style: 'page', page, size, offset: (page - 1) * size, limit: size, sort, filters, fields };
}

/**
 * Parses the query of a single-resource read: only `fields` (SPEC §4: "in lists and in single
 * reads"). Returns the requested field names or undefined.
 * @throws 400 `bad_request` for an unknown field or any other parameter.
 */
export function parseReadQuery(query: RawQuery, fields: readonly string[]): string[] | undefined {
  const problems: ErrorDetail[] = [];
  for (const name of Object.keys(query)) {
    if (name !== 'fields') problems.push({ field: name, message: `unknown query parameter ${name}` });
  }
  const picked = parseFields(query, fields, problems);
  if (problems.length > 0) throw badRequest(problems.length === 1 ? problems[0].message : 'the query string has invalid parameters', problems);
  return picked;
}

/** Rejects every query parameter, for operations that take none (SPEC §4: unknown parameter → 400). */
export function rejectQuery(query: RawQuery): void {
  const names = Object.keys(query);
  if (names.length === 0) return;
  const details = names.map((field) => ({ field, message: `unknown query parameter ${field}` }));
  throw badRequest(details.length === 1 ? details[0].message : 'the query string has invalid parameters', details);
}
