import { badRequest, type ErrorDetail } from '../errors/api-exception.js';
import { type Cursor, cursorKey, decodeCursor, fingerprint } from './cursor.js';
import { type ExpandDef, expandPaths, MAX_EXPAND_PATHS } from '../expand/expansion.js';

/** One filter of a list (docs/lists.md#filters): how its values are parsed, what it compares. */
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
 * A collection's list grammar (docs/lists.md) as the parser and {@link findPage} read it: which fields
 * sort (API name → `alias.column`), which filter, which may be picked with `fields`, the columns
 * each needs. Derived from the resource's field table by `defineFields` (field-table.ts), never
 * written by hand.
 */
export interface ListSpec {
  /** Sort key → `alias.column`; `id` first. */
  sortable: Readonly<Record<string, string>>;
  filters: Readonly<Record<string, FilterSpec>>;
  /** Ordered fields taking the range filters `field[gte]`, `[gt]`, `[lte]`, `[lt]` (none when absent). */
  ranges?: Readonly<Record<string, RangeSpec>>;
  /** Fields taking filter operators `field[ne]`, `[in]`, `[null]`, `[prefix]`, `[contains]` (none when absent). */
  operators?: Readonly<Record<string, OperatorSpec>>;
  /** Full-text search with `q` and `sort=relevance` (none when absent). */
  search?: SearchSpec;
  /** The paths `expand` may name (docs/lists.md#expanding-related-resources-expand), with their expanders (none when absent). */
  expand?: Readonly<Record<string, ExpandDef>>;
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

/** An ordered field's range filters: how values parse, which column they compare. */
export interface RangeSpec {
  type: 'int' | 'timestamp';
  /** `alias.column`. */
  column: string;
}

/** The range operators (docs/lists.md#range-filters) and their SQL comparison. */
export const RANGE_OPERATORS = { gte: '>=', gt: '>', lte: '<=', lt: '<' } as const;
export type RangeOperator = keyof typeof RANGE_OPERATORS;

/** One range condition of a list query: `field[op]=value`; timestamps as ISO 8601 UTC text. */
export interface RangeFilter {
  field: string;
  op: RangeOperator;
  column: string;
  type: RangeSpec['type'];
  value: number | string;
}

/**
 * The filter operators (docs/lists.md#filter-operators) a field may declare besides equality and
 * ranges: `ne` (differs from one value), `in` (any of a comma-separated list), `null` (`true`:
 * has no value, `false`: has one), `prefix` (starts with, case-sensitive), `contains` (has the
 * text anywhere, case-insensitive, `%` and `_` taken literally).
 */
export const FILTER_OPERATORS = ['ne', 'in', 'null', 'prefix', 'contains'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Most values one `field[in]` takes. */
export const MAX_IN_VALUES = 100;
/** Longest text (characters) `field[prefix]` and `field[contains]` take. */
export const MAX_PATTERN_LENGTH = 200;

/**
 * A field's filter operators: which it takes, the column they compare and how the values of
 * `ne` and `in` parse (as the equality filter of the same name does; text when it has none).
 */
export interface OperatorSpec {
  /** `alias.column`; undefined for a filter with its own condition (articles' `tag`: only `in`). */
  column?: string;
  ops: readonly FilterOperator[];
  type: 'int' | 'string' | 'enum';
  values?: readonly string[];
}

/**
 * One operator condition of a list query, `field[op]=value`: `ne` one value, `in` the distinct
 * values (parsed to the field's type), `null` a boolean, `prefix`/`contains` the text.
 */
export type OperatorFilter = { field: string; column?: string } & (
  | { op: 'ne'; value: string | number }
  | { op: 'in'; value: Array<string | number> }
  | { op: 'null'; value: boolean }
  | { op: 'prefix' | 'contains'; value: string }
);

/** The text of an operator filter's value as the query string carries it (`in`: comma-separated). */
export function operatorValueText(filter: OperatorFilter): string {
  return Array.isArray(filter.value) ? filter.value.join(',') : String(filter.value);
}

/**
 * A collection's full-text search (docs/lists.md#full-text-search-q): the text columns `q` looks in
 * and where each database keeps their index — PostgreSQL a side table of stored `tsvector`s
 * (`<table>_search`, GIN-indexed), SQLite an FTS5 external-content table (`<table>_fts`).
 */
export interface SearchSpec {
  /** The API names of the searched fields, in the documented order. */
  fields: readonly string[];
  /** Their columns, `alias.column`, in the same order (the first weighs most in the rank). */
  columns: readonly string[];
  /** The FTS5 table (SQLite), e.g. `articles_fts`. */
  fts: string;
  /** The table of stored vectors (PostgreSQL), e.g. `articles_search`. */
  vectors: string;
  /** `alias.id`. */
  id: string;
}

/** The sort key of the search rank (docs/lists.md#full-text-search-q): allowed only with `q`. */
export const RELEVANCE = 'relevance';
/** The `column` of the {@link RELEVANCE} sort key: {@link findPage} writes each database's rank expression in its place. */
export const RELEVANCE_COLUMN = '<relevance>';

/** Longest `q` (characters) and most terms in it. */
export const MAX_SEARCH_LENGTH = 256;
export const MAX_SEARCH_TERMS = 32;

/** A parsed `q`: the text as given (PostgreSQL's `websearch_to_tsquery` reads it) and its FTS5 `MATCH` form (SQLite). */
export interface SearchQuery {
  text: string;
  match: string;
}

/**
 * The web search syntax of `q` (PostgreSQL's `websearch_to_tsquery`) as an SQLite FTS5 query:
 * words must all occur, `"quoted words"` as a phrase, `-word` or `-"phrase"` must not occur, and
 * `or` between terms separates alternatives (each an AND of its terms; `or` binds loosest). Every
 * term is an FTS5 string (`"…"`, quotes doubled), so FTS5's own operators and characters in the
 * input are plain text and no input is an FTS5 syntax error. A term without a letter or digit is
 * dropped, as PostgreSQL drops what has no lexeme. Returns the `MATCH` text and the number of
 * terms, or a problem: no alternative left, one made only of exclusions, or too many terms.
 */
export function searchMatch(text: string): { match: string; terms: number } | { problem: string } {
  const groups: Array<Array<{ negated: boolean; text: string }>> = [[]];
  let terms = 0;
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/u.test(text[i])) i++;
    if (i >= text.length) break;
    let negated = false;
    if (text[i] === '-') {
      negated = true;
      i++;
    }
    let term: string;
    const quoted = text[i] === '"';
    if (quoted) {
      const end = text.indexOf('"', i + 1);
      term = text.slice(i + 1, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end + 1;
    } else {
      let end = i;
      while (end < text.length && !/\s/u.test(text[end]) && text[end] !== '"') end++;
      term = text.slice(i, end);
      i = end;
    }
    if (!negated && !quoted && term.toLowerCase() === 'or') {
      if (groups[groups.length - 1].length > 0) groups.push([]);
      continue;
    }
    if (!/[\p{L}\p{N}]/u.test(term)) continue;
    terms += 1;
    groups[groups.length - 1].push({ negated, text: term });
  }
  if (terms > MAX_SEARCH_TERMS) return { problem: `q has more than ${MAX_SEARCH_TERMS} terms` };
  const alternatives = groups.filter((group) => group.length > 0);
  if (alternatives.length === 0) return { problem: 'q must contain a word to search for (letters or digits)' };
  if (alternatives.some((group) => group.every((term) => term.negated))) {
    return { problem: 'q must contain a word to search for in each alternative, not only -exclusions' };
  }
  const fts = (term: string) => `"${term.replace(/"/g, '""')}"`;
  const match = alternatives.map((group) => {
    const positive = group.filter((term) => !term.negated).map((term) => fts(term.text));
    const negative = group.filter((term) => term.negated).map((term) => ` NOT ${fts(term.text)}`);
    return `((${positive.join(' AND ')})${negative.join('')})`;
  });
  return { match: match.join(' OR '), terms };
}

/** How `total` is computed (RFC 7240 `Prefer: count=…`): exactly, from the planner above a threshold, or not at all. */
export type CountMode = 'exact' | 'estimated' | 'none';

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
  /** `cursor`: keyset paging from {@link ListQuery.cursor}; page size from `size` or `limit` ({@link ListQuery.sizeParam}). */
  style: 'page' | 'offset' | 'cursor';
  /** Which parameter gave the page size of a cursor page (links repeat it). */
  sizeParam?: 'size' | 'limit';
  /** The decoded position of a cursor page. */
  cursor?: Cursor;
  /** The {@link fingerprint} of sort and filters: cursors of this query carry it. */
  fingerprint: string;
  /** Range filters (`field[gte]=…`), all of which must hold. */
  ranges: RangeFilter[];
  /** Operator filters (`field[ne]=…`, `[in]`, `[null]`, `[prefix]`, `[contains]`), all of which must hold. */
  operators: OperatorFilter[];
  /** The full-text search `q`, when given. */
  search?: SearchQuery;
  /** The paths to expand (`expand=author,comments.author`: parents listed before their nested paths), when given. */
  expand?: string[];
  /** The count the caller asked for (`Prefer: count=…`), or the default of its paging style. */
  count: CountMode;
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

/** Default and maximum page size (docs/limits.md#lists). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** Largest accepted `page` and `offset`, and the range of an integer filter value. */
export const MAX_PAGE = 1_000_000_000;
export const MAX_OFFSET = 2_000_000_000;
export const MAX_FILTER_INT = 2_147_483_647;

const PAGING = ['page', 'size', 'offset', 'limit', 'cursor'];

/** Largest accepted `cursor` length (characters). */
export const MAX_CURSOR_LENGTH = 4200;

/** What {@link parseListQuery} needs besides the query string. */
export interface ListContext {
  /** HMAC key of cursors ({@link cursorKey}); a per-process key when absent. */
  key?: Buffer;
  /** The collection path (`/v1/todos`): a cursor is bound to it. */
  path?: string;
  /** The request's `Prefer` header(s) (RFC 7240). */
  prefer?: string | string[];
}

/**
 * The `count` preference of RFC 7240 `Prefer` header(s): `exact`, `estimated` or `none`, or
 * undefined when absent or of another value (a preference the server does not understand is
 * ignored, RFC 7240 §2). Other preferences are ignored; the first `count` wins.
 */
export function preferredCount(prefer: string | string[] | undefined): CountMode | undefined {
  const texts = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  for (const text of texts) {
    for (const item of text.split(',')) {
      const [token] = item.split(';');
      const match = /^\s*count\s*=\s*"?([A-Za-z]+)"?\s*$/i.exec(token);
      if (!match) continue;
      const value = match[1].toLowerCase();
      return value === 'exact' || value === 'estimated' || value === 'none' ? value : undefined;
    }
  }
  return undefined;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses the value of `name` (= `field[op]`) for operator `op` of a field declared by `spec`; undefined after a problem. */
function parseOperatorValue(
  name: string,
  field: string,
  op: FilterOperator,
  spec: OperatorSpec,
  text: string,
  problems: ErrorDetail[],
): OperatorFilter | undefined {
  const filterSpec = { ...spec, description: '', example: '' } as FilterSpec;
  const column = spec.column;
  switch (op) {
    case 'ne': {
      const value = parseFilterValue(name, filterSpec, text, problems);
      return value === undefined ? undefined : { field, column, op, value };
    }
    case 'in': {
      const parts = text.split(',');
      if (parts.some((part) => part === '')) {
        problems.push({ field: name, message: `${name} must be a comma-separated list of values without empty entries` });
        return undefined;
      }
      const before = problems.length;
      const values = [...new Set(parts.map((part) => parseFilterValue(name, filterSpec, part, problems)))];
      if (problems.length > before) return undefined;
      if (values.length > MAX_IN_VALUES) {
        problems.push({ field: name, message: `${name} takes at most ${MAX_IN_VALUES} values` });
        return undefined;
      }
      return { field, column, op, value: values as Array<string | number> };
    }
    case 'null':
      if (text === 'true' || text === 'false') return { field, column, op, value: text === 'true' };
      problems.push({ field: name, message: `${name} must be true or false` });
      return undefined;
    default:
      if (text === '' || [...text].length > MAX_PATTERN_LENGTH) {
        problems.push({ field: name, message: `${name} must be 1 to ${MAX_PATTERN_LENGTH} characters` });
        return undefined;
      }
      return { field, column, op, value: text };
  }
}

/**
 * Parses every `field[op]` parameter: the range filters (docs/lists.md#range-filters) and the
 * filter operators (docs/lists.md#filter-operators), each given once (`[in]` may be repeated, its
 * values adding up). Returns both in a
 * canonical order (by field, then operator), so the same filters always make the same
 * fingerprint and links.
 */
function parseBrackets(query: RawQuery, spec: ListSpec, problems: ErrorDetail[]): { ranges: RangeFilter[]; operators: OperatorFilter[] } {
  const ranges: RangeFilter[] = [];
  const operators: OperatorFilter[] = [];
  for (const name of Object.keys(query)) {
    const match = /^([a-z_]+)\[([a-z]+)\]$/.exec(name);
    if (!match) continue;
    const [, field, op] = match;
    const range = spec.ranges?.[field];
    const operator = spec.operators?.[field];
    if (!range && !operator && !Object.hasOwn(spec.filters, field) && !Object.hasOwn(spec.sortable, field) && !spec.selectable.includes(field)) {
      problems.push({ field: name, message: `unknown query parameter ${name}` });
      continue;
    }
    if (operator?.ops.includes(op as FilterOperator)) {
      // `[in]` may be repeated (a client that writes arrays as repeated parameters): the values add up
      const raw = query[name];
      const text = op === 'in' && Array.isArray(raw) && raw.every((part) => typeof part === 'string') ? raw.join(',') : single(query, name, problems);
      if (text === undefined) continue;
      const parsed = parseOperatorValue(name, field, op as FilterOperator, operator, text, problems);
      if (parsed) operators.push(parsed);
      continue;
    }
    const takes = [...(range ? Object.keys(RANGE_OPERATORS) : []), ...(operator?.ops ?? [])];
    if (!range) {
      if (Object.hasOwn(RANGE_OPERATORS, op)) {
        const allowed = Object.keys(spec.ranges ?? {});
        problems.push({
          field: name,
          message: `${field} takes no range filter; ${allowed.length ? `ordered fields: ${allowed.join(', ')}` : 'this list has none'}`,
        });
      } else {
        problems.push({ field: name, message: `${field} takes no ${op} filter; ${takes.length ? `it takes: ${takes.join(', ')}` : 'it takes no operator'}` });
      }
      continue;
    }
    if (!Object.hasOwn(RANGE_OPERATORS, op)) {
      problems.push({
        field: name,
        message: (FILTER_OPERATORS as readonly string[]).includes(op)
          ? `${field} takes no ${op} filter; it takes: ${takes.join(', ')}`
          : `unknown range operator ${op}; use ${takes.join(', ').replace(/, ([a-z]+)$/, ' or $1')}`,
      });
      continue;
    }
    const text = single(query, name, problems);
    if (text === undefined) continue;
    let value: number | string | undefined;
    if (range.type === 'int') {
      const n = /^(0|-?[1-9][0-9]{0,9})$/.test(text) ? Number(text) : NaN;
      if (n >= -MAX_FILTER_INT - 1 && n <= MAX_FILTER_INT) value = n;
      else problems.push({ field: name, message: `${name} must be an integer from ${-MAX_FILTER_INT - 1} to ${MAX_FILTER_INT}` });
    } else {
      const time = TIMESTAMP.test(text) ? new Date(text) : undefined;
      if (time && !Number.isNaN(time.getTime()) && time.getUTCFullYear() >= 1 && time.getUTCFullYear() <= 9999) value = time.toISOString();
      else problems.push({ field: name, message: `${name} must be an ISO 8601 date-time with a time zone, e.g. 2026-11-21T10:15:00Z` });
    }
    if (value !== undefined) ranges.push({ field, op: op as RangeOperator, column: range.column, type: range.type, value });
  }
  const order = Object.keys(RANGE_OPERATORS);
  return {
    ranges: ranges.sort((a, b) => a.field.localeCompare(b.field) || order.indexOf(a.op) - order.indexOf(b.op)),
    operators: operators.sort((a, b) => a.field.localeCompare(b.field) || FILTER_OPERATORS.indexOf(a.op) - FILTER_OPERATORS.indexOf(b.op)),
  };
}

/** A request's query string as Express's simple parser gives it. */
export type RawQuery = Record<string, unknown>;

/**
 * Direction of the implicit `id` tie-breaker after the given sort keys (docs/lists.md#sorting: `id` is always
 * the last tie-breaker): the direction of the first key, ascending when there is none. So
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
 * Parses `expand` (docs/lists.md#expanding-related-resources-expand) against the collection's
 * expandable paths: comma-separated, each a path of `spec` (`author`, `comments.author`; a nested
 * path brings its parent), at most {@link MAX_EXPAND_PATHS}. With `fields`, a path whose field it
 * leaves out is dropped (the field is not returned). Returns the paths (parents first) or undefined
 * when absent; records each problem on `expand`.
 */
function parseExpand(query: RawQuery, spec: ListSpec['expand'], fields: string[] | undefined, problems: ErrorDetail[]): string[] | undefined {
  const text = single(query, 'expand', problems);
  if (text === undefined || spec === undefined) return undefined;
  const allowed = expandPaths(spec);
  const names = text.split(',').map((name) => name.trim());
  if (names.some((name) => name === '')) {
    problems.push({ field: 'expand', message: 'expand must be a comma-separated list of paths' });
    return undefined;
  }
  const unknown = names.filter((name) => !allowed.includes(name));
  if (unknown.length > 0) {
    problems.push({ field: 'expand', message: `cannot expand ${unknown.join(', ')}; expandable: ${allowed.join(', ')}` });
    return undefined;
  }
  const paths = allowed.filter((path) => names.includes(path) || names.some((name) => name.startsWith(`${path}.`)));
  if (paths.length > MAX_EXPAND_PATHS) {
    problems.push({ field: 'expand', message: `expand takes at most ${MAX_EXPAND_PATHS} paths (a nested path counts its parent)` });
    return undefined;
  }
  // a field `fields` leaves out is not returned, so not expanded either (no statement runs for it)
  return fields === undefined ? paths : paths.filter((path) => fields.includes(path.split('.')[0]));
}

/**
 * Parses a collection's query string (docs/lists.md): `page`/`size` or `offset`/`limit` (mixing → 400),
 * or `cursor` (with `size` or `limit`; with `page` or `offset` → 400; modified, or issued for
 * other sort/filters → 400 naming `cursor`), `sort` (`field`, `-field`, comma-separated, sortable
 * fields only), equality filters (repeated parameter = any of), range filters `field[gte|gt|lte|lt]`
 * on the ordered fields and the filter operators `field[ne|in|null|prefix|contains]` on the fields
 * that declare them (once each; bad value, unknown operator, or an operator the field does not
 * take → 400 naming the parameter), `fields`; any other parameter → 400 naming it. The count mode comes from
 * `Prefer: count=…` (default `exact`, `none` with `cursor`).
 * Takes Express's parsed query (`string | string[]` values), the resource's field table
 * ({@link ListSpec}) and the request context (cursor key, path, `Prefer`).
 * @throws 400 `bad_request` with every problem in `details`.
 */
export function parseListQuery(query: RawQuery, spec: ListSpec, context: ListContext = {}): ListQuery {
  const problems: ErrorDetail[] = [];
  for (const name of Object.keys(query)) {
    const searched = name === 'q' && spec.search !== undefined;
    const expanded = name === 'expand' && spec.expand !== undefined;
    if (
      !PAGING.includes(name) &&
      name !== 'sort' &&
      name !== 'fields' &&
      !searched &&
      !expanded &&
      !Object.hasOwn(spec.filters, name) &&
      !/^[a-z_]+\[[a-z]+\]$/.test(name)
    ) {
      problems.push({ field: name, message: `unknown query parameter ${name}` });
    }
  }
  const pageStyle = query.page !== undefined || query.size !== undefined;
  const offsetStyle = query.offset !== undefined || query.limit !== undefined;
  if (pageStyle && offsetStyle) {
    problems.push({ field: 'offset', message: 'use either page/size or offset/limit, not both' });
  }
  const cursorStyle = query.cursor !== undefined;
  if (cursorStyle && (query.page !== undefined || query.offset !== undefined)) {
    problems.push({ field: 'cursor', message: 'cursor cannot be combined with page or offset' });
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
  const expand = parseExpand(query, spec.expand, fields, problems);
  const { ranges, operators } = parseBrackets(query, spec, problems);
  let search: SearchQuery | undefined;
  const searchText = spec.search ? single(query, 'q', problems) : undefined;
  if (searchText !== undefined) {
    const parsed = [...searchText].length > MAX_SEARCH_LENGTH ? { problem: `q must be at most ${MAX_SEARCH_LENGTH} characters` } : searchMatch(searchText);
    if ('problem' in parsed) problems.push({ field: 'q', message: parsed.problem });
    else search = { text: searchText, match: parsed.match };
  }
  if (sort.some((key) => key.field === RELEVANCE) && searchText === undefined) {
    problems.push({ field: 'sort', message: 'sort by relevance needs q' });
  }

  const canonicalFilters = Object.entries(filters)
    .map(([name, values]) => [name, [...values].sort()] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  const fp = fingerprint([
    context.path ?? spec.alias,
    sort.map((key) => `${key.direction === 'DESC' ? '-' : ''}${key.field}`),
    canonicalFilters,
    ranges.map((r) => [r.field, r.op, r.value]),
    // absent without operators and q, so the cursors of lists without them stay valid
    ...(operators.length > 0 || searchText !== undefined ? [operators.map((o) => [o.field, o.op, o.value])] : []),
    ...(searchText !== undefined ? [searchText] : []),
  ]);
  let cursor: Cursor | undefined;
  const cursorText = single(query, 'cursor', problems);
  if (cursorText !== undefined) {
    const decoded =
      cursorText.length > MAX_CURSOR_LENGTH
        ? { ok: false as const, message: 'cursor is not valid (too long)' }
        : decodeCursor(context.key ?? cursorKey(undefined), fp, sort.length, cursorText);
    if (decoded.ok) cursor = decoded.cursor;
    else problems.push({ field: 'cursor', message: decoded.message });
  }

  if (problems.length > 0) {
    throw badRequest(problems.length === 1 ? problems[0].message : 'the query string has invalid parameters', problems);
  }
  const count = preferredCount(context.prefer) ?? (cursorStyle ? 'none' : 'exact');
  const common = { sort, filters, fields, ranges, operators, ...(search && { search }), ...(expand && { expand }), fingerprint: fp, count };
  if (cursorStyle) {
    const sizeParam = query.limit !== undefined ? 'limit' : 'size';
    const n = sizeParam === 'limit' ? limit : size;
    return { style: 'cursor', sizeParam, cursor, page: 1, size: n, offset: 0, limit: n, ...common };
  }
  return offsetStyle
    ? { style: 'offset', offset, limit, page: Math.floor(offset / limit) + 1, size: limit, ...common }
    : { style: 'page', page, size, offset: (page - 1) * size, limit: size, ...common };
}

/**
 * Parses the query of a single-resource read: `fields` (docs/lists.md#sparse-fieldsets-fields: in lists and in single
 * reads) and, where the resource declares paths, `expand` (docs/lists.md#expanding-related-resources-expand).
 * Returns the requested field names (undefined: all) and paths (undefined: none).
 * @throws 400 `bad_request` for an unknown field or path, or any other parameter.
 */
export function parseReadParams(query: RawQuery, fields: readonly string[], expand?: ListSpec['expand']): { fields?: string[]; expand?: string[] } {
  const problems: ErrorDetail[] = [];
  for (const name of Object.keys(query)) {
    if (name !== 'fields' && !(name === 'expand' && expand !== undefined)) problems.push({ field: name, message: `unknown query parameter ${name}` });
  }
  const picked = parseFields(query, fields, problems);
  const paths = parseExpand(query, expand, picked, problems);
  if (problems.length > 0) throw badRequest(problems.length === 1 ? problems[0].message : 'the query string has invalid parameters', problems);
  return { ...(picked && { fields: picked }), ...(paths && { expand: paths }) };
}

/**
 * Parses the query of a single-resource read that takes only `fields` (docs/lists.md#sparse-fieldsets-fields). Returns the
 * requested field names or undefined.
 * @throws 400 `bad_request` for an unknown field or any other parameter.
 */
export function parseReadQuery(query: RawQuery, fields: readonly string[]): string[] | undefined {
  return parseReadParams(query, fields).fields;
}

/** Rejects every query parameter, for operations that take none (docs/wire.md#query-strings: unknown parameter → 400). */
export function rejectQuery(query: RawQuery): void {
  const names = Object.keys(query);
  if (names.length === 0) return;
  const details = names.map((field) => ({ field, message: `unknown query parameter ${field}` }));
  throw badRequest(details.length === 1 ? details[0].message : 'the query string has invalid parameters', details);
}
