import { Brackets, type DataSource, type ObjectLiteral, type Repository, type SelectQueryBuilder, type WhereExpressionBuilder } from 'typeorm';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata.js';
import type { ColumnOf, FieldTable, Row } from './field-table.js';
import type { CursorValue } from './cursor.js';
import {
  type CountMode,
  type ListQuery,
  type ListSpec,
  type OperatorFilter,
  RANGE_OPERATORS,
  RELEVANCE_COLUMN,
  type SearchSpec,
  type SortKey,
} from './list-query.js';
import { Page } from './page.js';

/**
 * Above this many rows (the planner's estimate), `Prefer: count=estimated` answers the PostgreSQL
 * planner's estimate instead of counting; at or below it, and on SQLite, the count is exact.
 */
export const ESTIMATE_THRESHOLD = 10_000;

/** A value a visibility scope or an equality filter accepts: one value, or any of several. */
export type ScopeValue = string | number | ReadonlyArray<string | number>;

/**
 * One set of rows a caller may see, as equality conditions that must all hold: column expression
 * (as in the {@link ListSpec}, e.g. `a.status`) → the accepted value or values. `{}` is every row.
 * The columns must be NOT NULL (the count relies on each condition being true or false).
 */
export type Scope = Readonly<Record<string, ScopeValue>>;

/** Scope or filter conditions normalised to value lists: column expression → accepted values. */
export type Conditions = Map<string, ReadonlyArray<string | number>>;

function toConditions(scope: Scope): Conditions {
  return new Map(Object.entries(scope).map(([column, value]) => [column, Array.isArray(value) ? value : [value as string | number]]));
}

/**
 * Narrows a visibility scope by the equality filters: a column both constrain keeps the common
 * values. Returns undefined when nothing is left (a filter excludes the whole scope).
 */
function intersect(scope: Conditions, filters: Conditions): Conditions | undefined {
  const out = new Map(scope);
  for (const [column, values] of filters) {
    const current = out.get(column);
    const kept = current ? current.filter((value) => values.includes(value)) : values;
    if (kept.length === 0) return undefined;
    out.set(column, kept);
  }
  return out;
}

/** True when every row of `inner` is also in `outer` (each condition of `outer` is implied by `inner`). */
function within(inner: Conditions, outer: Conditions): boolean {
  for (const [column, values] of outer) {
    const own = inner.get(column);
    if (!own || !own.every((value) => values.includes(value))) return false;
  }
  return true;
}

/**
 * The narrowest equivalent form of "visible AND filters": each scope narrowed by the filters,
 * empty ones dropped, and a scope contained in another dropped (of equal ones, the first stays).
 * Takes the visible scopes (undefined: every row) and the equality filters; returns the scopes
 * whose union is exactly the visible rows passing the filters (none: no row). `status=published` for an
 * ordinary article reader leaves `status = 'published'` alone (the own-articles scope narrowed to
 * published ones lies within it); `status=draft` leaves `author_id = me AND status = 'draft'`.
 */
export function narrowScopes(visible: readonly Scope[] | undefined, filters: Conditions): Conditions[] {
  const narrowed = (visible ?? [{}])
    .map((scope) => intersect(toConditions(scope), filters))
    .filter((scope): scope is Conditions => scope !== undefined && [...scope.values()].every((values) => values.length > 0));
  return narrowed.filter((scope, i) => !narrowed.some((other, j) => j !== i && within(scope, other) && (!within(other, scope) || j < i)));
}

/** SQL of one scope (`TRUE`-equivalent `1 = 1` when empty) with its parameters named `<prefix>_<n>`. */
function scopeSql(scope: Conditions, prefix: string): { sql: string; params: Record<string, unknown> } {
  const parts: string[] = [];
  const params: Record<string, unknown> = {};
  let n = 0;
  for (const [column, values] of scope) {
    const param = `${prefix}_${n++}`;
    if (values.length === 1) {
      parts.push(`${column} = :${param}`);
      params[param] = values[0];
    } else {
      parts.push(`${column} IN (:...${param})`);
      params[param] = values;
    }
  }
  return { sql: parts.length > 0 ? parts.join(' AND ') : '1 = 1', params };
}

/** Adds "in any of `scopes`" to `qb`: one scope as plain conditions, several as an OR of them. */
function whereAnyScope(qb: WhereExpressionBuilder, scopes: Conditions[], prefix: string): void {
  const parts = scopes.map((scope, i) => scopeSql(scope, `${prefix}${i}`));
  if (parts.length === 1) {
    if (scopes[0].size > 0) qb.andWhere(parts[0].sql, parts[0].params);
    return;
  }
  qb.andWhere(
    new Brackets((or) => {
      for (const part of parts) or.orWhere(`(${part.sql})`, part.params);
    }),
  );
}

/** Whether `column` (`alias.name`) of the table of `metadata` may hold NULL; expressions count as nullable. */
function nullable(metadata: EntityMetadata, alias: string, column: string): boolean {
  const [prefix, name] = column.split('.');
  if (prefix !== alias || name === undefined) return true;
  return metadata.findColumnWithDatabaseName(name)?.isNullable ?? true;
}

/** Whether `column` (`alias.name`) of the table of `metadata` is a timestamp (its cursor values and range bounds travel as text). */
function timestamp(metadata: EntityMetadata, column: string): boolean {
  const [, name] = column.split('.');
  const type = metadata.findColumnWithDatabaseName(name ?? '')?.type;
  return type === 'timestamptz' || type === 'datetime' || type === 'timestamp';
}

/**
 * A timestamp bound (ISO 8601 UTC) as the database compares it: PostgreSQL casts the text to
 * `timestamptz`; SQLite stores TypeORM's UTC text `YYYY-MM-DD HH:MM:SS.SSS`, compared as text.
 */
function timestampParam(postgres: boolean, name: string): string {
  return postgres ? `CAST(:${name} AS timestamptz)` : `:${name}`;
}

function sqliteTimestamp(iso: string): string {
  return iso.replace('T', ' ').replace('Z', '');
}

/**
 * The least string greater than every string that starts with `prefix`, in code point order (which
 * is the byte order of UTF-8: SQLite's `BINARY` collation and PostgreSQL's `"C"`): the prefix
 * with its last code point incremented (surrogates skipped; trailing U+10FFFF dropped first).
 * Undefined when there is none (the prefix is all U+10FFFF): every string from the prefix on
 * then starts with it. `prefix[prefix]=ab` reads `column >= 'ab' AND column < 'ac'`, one range of
 * an index on the column (docs/lists.md#filter-operators).
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = [...prefix].map((char) => char.codePointAt(0) as number);
  while (points.length > 0 && points[points.length - 1] === 0x10ffff) points.pop();
  if (points.length === 0) return undefined;
  const last = points.pop() as number;
  points.push(last + 1 === 0xd800 ? 0xe000 : last + 1);
  return String.fromCodePoint(...points);
}

/** The `LIKE` pattern (escape character `!`) matching `text` anywhere: `%`, `_` and `!` in it taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (char) => `!${char}`)}%`;
}

/**
 * The SQL of one operator filter (docs/lists.md#filter-operators) on `column` with its parameters
 * named `<param>…`, for the conditions ANDed to a list; `postgres` picks the database's form:
 * - `ne`: `column <> :p` (an item without a value matches neither `=` nor `<>`);
 * - `null`: `column IS NULL` / `IS NOT NULL`;
 * - `prefix`: a range in code point order, `column >= :p AND column < :p_end`, on PostgreSQL on
 *   `column COLLATE "C"` (served by an index on that expression);
 * - `contains`: `lower(column) LIKE lower(:p) ESCAPE '!'` on PostgreSQL (a trigram index on
 *   `lower(column)` serves it), `column LIKE :p ESCAPE '!'` on SQLite (case-insensitive for ASCII
 *   letters only; read from the rows the other conditions leave).
 * `in` has no SQL of its own: it narrows the equality filters, or runs the filter's own condition.
 */
export function operatorSql(
  filter: Exclude<OperatorFilter, { op: 'in' }>,
  column: string,
  param: string,
  postgres: boolean,
): { sql: string; params: Record<string, unknown> } {
  switch (filter.op) {
    case 'ne':
      return { sql: `${column} <> :${param}`, params: { [param]: filter.value } };
    case 'null':
      return { sql: `${column} IS ${filter.value ? '' : 'NOT '}NULL`, params: {} };
    case 'prefix': {
      const target = postgres ? `${column} COLLATE "C"` : column;
      const end = prefixUpperBound(filter.value);
      return end === undefined
        ? { sql: `${target} >= :${param}`, params: { [param]: filter.value } }
        : { sql: `${target} >= :${param} AND ${target} < :${param}_end`, params: { [param]: filter.value, [`${param}_end`]: end } };
    }
    case 'contains':
      return {
        sql: postgres ? `lower(${column}) LIKE lower(:${param}) ESCAPE '!'` : `${column} LIKE :${param} ESCAPE '!'`,
        params: { [param]: containsPattern(filter.value) },
      };
  }
}

/** The text search configuration of `q` on PostgreSQL: no stemming, no stop words, any language (docs/lists.md#full-text-search-q). */
export const SEARCH_CONFIGURATION = 'simple';

/**
 * The SQL of a full-text search `q` (docs/lists.md#full-text-search-q) on a table declaring
 * `search`, with its parameters (`q_text`, `q_match`): `condition` keeps the matching rows,
 * `relevance` is their rank, larger for a better match (never NULL on a matching row).
 * - PostgreSQL: `id IN (SELECT id FROM <table>_search WHERE vector @@ websearch_to_tsquery('simple',
 *   :q_text))` — the side table's stored `tsvector` (`setweight(to_tsvector('simple',
 *   coalesce(column, '')), 'A') || …'B'…`: the first searched field weighs A, the others B), kept by
 *   a trigger and GIN-indexed; rank `ts_rank` of the row's stored vector.
 * - SQLite: an inner `join` of `(SELECT rowid AS id, -bm25(<table>_fts, 4.0, 1.0…) AS rank FROM
 *   <table>_fts WHERE <table>_fts MATCH :q_match)` as `search_rank` (the first field weighs 4, the
 *   others 1): FTS5 ranks every match in one pass — a `bm25` per row in a correlated subquery runs
 *   the whole query again for each row (3 s instead of 15 ms for 889 matches in 100,000 rows) — and
 *   the join keeps the matching rows (no `condition`); the rank is `search_rank.rank`.
 */
export function searchSql(
  search: SearchSpec,
  query: { text: string; match: string },
  postgres: boolean,
): { condition?: string; join?: { sql: string; alias: string; on: string }; relevance: string; params: Record<string, unknown> } {
  if (postgres) {
    const tsquery = `websearch_to_tsquery('${SEARCH_CONFIGURATION}'::regconfig, :q_text)`;
    return {
      condition: `${search.id} IN (SELECT s.id FROM ${search.vectors} s WHERE s.vector @@ ${tsquery})`,
      relevance: `(SELECT ts_rank(s.vector, ${tsquery}) FROM ${search.vectors} s WHERE s.id = ${search.id})`,
      params: { q_text: query.text },
    };
  }
  const weights = search.fields.map((_, i) => (i === 0 ? '4.0' : '1.0')).join(', ');
  return {
    join: {
      sql: `(SELECT rowid AS id, -bm25(${search.fts}, ${weights}) AS rank FROM ${search.fts} WHERE ${search.fts} MATCH :q_match)`,
      alias: 'search_rank',
      on: `search_rank.id = ${search.id}`,
    },
    relevance: 'search_rank.rank',
    params: { q_match: query.match },
  };
}

/** The sort keys read in the other direction (NULL stays the largest value: `NULLS FIRST` ↔ `NULLS LAST`). */
function reversed(keys: readonly SortKey[]): SortKey[] {
  return keys.map((key) => ({ ...key, direction: key.direction === 'ASC' ? 'DESC' : 'ASC' }));
}

/** One part of a keyset predicate ({@link keysetParts}): its SQL, and the columns it holds at NULL. */
export interface KeysetPart {
  sql: string;
  nulls: string[];
}

/**
 * The keyset predicate "comes after the row with sort-key `values`" in the order of `keys` (NULL
 * the largest value; `id`, never null, last), as disjoint **parts** in the order of the list (every
 * row of a part comes before every row of the next), with their parameters. Each part is one
 * range of the `(…, first key, id)` index that serves the order, so a page deep in the list reads
 * about as many index entries as page 1:
 * - every key in one direction, none after the first nullable, no value null: the row-value
 *   comparison `(c1, …, id) > (:k0, …)` (it is never true for a NULL `c1`);
 * - otherwise a bound on the first key that the index seeks to (`c1 >= :k0` ascending,
 *   `c1 <= :k0` descending), ANDed with the exact expansion `c1 > v1 OR (c1 = v1 AND <after the
 *   other keys>)`, which then only filters the rows that tie with the position;
 * - the NULLs of a nullable first key are a part of their own: after a value ascending, every NULL
 *   (`c1 IS NULL`, ordered by the other keys); after a NULL, the NULLs past the position on the other
 *   keys, and descending then every value (`c1 IS NOT NULL`).
 * An OR of these parts in one WHERE would make the databases filter from the start of the index;
 * {@link findPage} reads the parts one after the other, each with its own ORDER BY and LIMIT,
 * until the page is full (a walk among the values never reads the NULLs). Each part names the
 * columns it holds at NULL (`nulls`): they are left out of its ORDER BY.
 */
export function keysetParts(
  keys: readonly SortKey[],
  values: readonly CursorValue[],
  isNullable: (column: string) => boolean,
  isTimestamp: (column: string) => boolean,
  postgres: boolean,
): { parts: KeysetPart[]; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  const param = (i: number) => {
    params[`k_${i}`] = values[i];
    return isTimestamp(keys[i].column) ? timestampParam(postgres, `k_${i}`) : `:k_${i}`;
  };
  const isNull = (column: string) => `${column} IS NULL`;
  const after = (i: number): KeysetPart[] => {
    const key = keys[i];
    const column = key.column;
    const asc = key.direction === 'ASC';
    const rest = keys.slice(i);
    if (values[i] === null) {
      const nulls = i + 1 < keys.length ? after(i + 1).map((part) => ({ sql: `${isNull(column)} AND ${part.sql}`, nulls: [column, ...part.nulls] })) : [];
      return asc ? nulls : [...nulls, { sql: `${column} IS NOT NULL`, nulls: [] }];
    }
    const nullPart = asc && isNullable(column) ? [{ sql: isNull(column), nulls: [column] }] : [];
    const op = asc ? '>' : '<';
    const rowValue = rest.every((other, j) => other.direction === key.direction && values[i + j] !== null && (j === 0 || !isNullable(other.column)));
    if (rowValue) {
      const sql =
        rest.length === 1
          ? `${column} ${op} ${param(i)}`
          : `(${rest.map((other) => other.column).join(', ')}) ${op} (${rest.map((_, j) => param(i + j)).join(', ')})`;
      return [{ sql, nulls: [] }, ...nullPart];
    }
    const tie = after(i + 1);
    const bounded = `${column} ${op}= ${param(i)} AND (${column} ${op} ${param(i)} OR (${column} = ${param(i)} AND (${tie.map((part) => `(${part.sql})`).join(' OR ')})))`;
    return [{ sql: bounded, nulls: [] }, ...nullPart];
  };
  return { parts: after(0), params };
}

/**
 * Where a list reads from: the resource's repository, or the repository with a fixed condition of
 * the caller's own (`where`: SQL with named parameters, e.g. `g.user_id = :me`, ANDed first) and
 * that condition's parameters. The condition's text is part of the shape the list's statements are
 * built once for, so it names its values as parameters and never writes them into the text.
 */
export type ListSource<E extends ObjectLiteral> = Repository<E> | { repository: Repository<E>; where: string; params: Readonly<Record<string, unknown>> };

/** What a list selects besides its field table's columns. */
export interface PageOptions {
  /**
   * Raw result key → SQL expression on the table's alias (e.g. a correlated subquery for what the
   * rows' own columns lack, such as an article's tag names), selected with the page's rows, in the
   * same statement. Fixed text without parameters: it is part of the statements' shape.
   */
  select?: Readonly<Record<string, string>>;
}

/** The limit and offset written into a statement's text when it is built; each request's numbers replace them (the text is otherwise TypeORM's own). */
const LIMIT_MARK = 2147480001;
const OFFSET_MARK = 2147480002;
const MARKS = new RegExp(`\\b(${LIMIT_MARK}|${OFFSET_MARK})\\b`);

/**
 * A statement as built once per shape: the query builder's SQL with named parameters (`:name`,
 * `:...name`), cut at the limit and offset marks — the even entries are text, the odd ones the
 * hole between them (`limit` or `offset`).
 */
type Template = readonly string[];

/** How many list statements each DataSource keeps built (the least recently used go first). */
export const MAX_LIST_STATEMENTS = 512;

const templates = new WeakMap<DataSource, Map<string, Template>>();
const tableIds = new WeakMap<object, number>();
let tables = 0;

/** A number naming `table` in the statements' cache keys (two field tables may share an entity and alias). */
function tableId(table: object): number {
  let id = tableIds.get(table);
  if (id === undefined) tableIds.set(table, (id = ++tables));
  return id;
}

/**
 * The statement of `key` (a list's shape and which of its statements) on `dataSource`: built by
 * `build` (a query builder's named SQL) on the first use of that key and kept in a bounded cache;
 * later uses build no query builder.
 */
function template(dataSource: DataSource, key: string, build: () => string): Template {
  let cache = templates.get(dataSource);
  if (!cache) templates.set(dataSource, (cache = new Map()));
  const known = cache.get(key);
  if (known) {
    cache.delete(key);
    cache.set(key, known);
    return known;
  }
  const parts = build()
    .split(MARKS)
    .map((part, i) => (i % 2 === 0 ? part : part === String(LIMIT_MARK) ? 'limit' : 'offset'));
  cache.set(key, parts);
  if (cache.size > MAX_LIST_STATEMENTS) cache.delete(cache.keys().next().value as string);
  return parts;
}

/**
 * Runs a built statement with this request's `params` (named, escaped by the driver as TypeORM's
 * query builder does) and its limit and offset; returns the raw rows.
 */
function run<R>(dataSource: DataSource, parts: Template, params: ObjectLiteral, limit = 0, offset = 0): Promise<R[]> {
  const named = parts.length === 1 ? parts[0] : parts.map((part, i) => (i % 2 === 0 ? part : String(part === 'limit' ? limit : offset))).join('');
  const [sql, args] = dataSource.driver.escapeQueryWithParameters(named, params);
  return dataSource.query<R[]>(sql, args);
}

/** The parameters of {@link whereAnyScope}'s condition for the same `scopes` and `prefix`. */
function anyScopeParams(scopes: Conditions[], prefix: string): Record<string, unknown> {
  return Object.assign({}, ...scopes.map((scope, i) => scopeSql(scope, `${prefix}${i}`).params)) as Record<string, unknown>;
}

/**
 * Runs one page of a list (docs/lists.md) on the resource's table, in SQL that an index can serve:
 * - `visible` are the rows the caller may read, as {@link Scope}s (undefined: every row, e.g. for
 *   an admin). They are combined with the equality filters into the narrowest equivalent
 *   predicate ({@link narrowScopes}), so a filter that already decides visibility
 *   (`status=published`) leaves a plain `status = 'published'` and no `OR`; the source's own
 *   condition (e.g. the caller's API keys), custom filter conditions (tags) and the range
 *   filters (`column >= :bound`, timestamps compared as the database stores them) are ANDed.
 *   A filter that excludes every visible row answers an empty page without a query.
 * - Selects only the columns the response needs (those of the requested `fields`, `id`, the
 *   spec's `always` columns) plus the sort keys, whose values make the page's cursors.
 * - Orders by the sort keys, `id` last (in the direction of the first key, see
 *   {@link parseListQuery}); `NULLS LAST`/`NULLS FIRST` (nulls sort as the largest value) only on
 *   nullable columns, so a `(filter columns…, sort column, id)` index serves the order read
 *   forwards or backwards on both databases.
 * - Position: `OFFSET` for page/offset paging; for a cursor the keyset predicate
 *   ({@link keysetParts}) past the cursor's row — several parts (the NULLs of a nullable first
 *   key) read one after the other, each with its own ORDER BY and LIMIT, until the page is full — read forwards (`after`) or in the reversed order
 *   (`before`, rows then turned back), so a deep page costs what the first does. One row more
 *   than the page is read to know whether another page follows.
 * - The page's ids are chosen by an inner query that reads only the index (filter, sort and id
 *   columns); the wide columns are fetched for those rows alone, so a deep `offset` skips index
 *   entries rather than rows.
 * - `total` by `query.count`: `exact` is `COUNT(*)` of the one scope, or the sum of the counts of
 *   disjoint pieces (each scope minus the ones before it), each of which an index on its columns
 *   answers alone; `estimated` is, on PostgreSQL, the planner's row estimate of the same pieces
 *   (`EXPLAIN`) when above {@link ESTIMATE_THRESHOLD}, else exact (always exact on SQLite);
 *   `none` runs no count and leaves `total` undefined. The page says what it applied.
 * - The SQL text of each statement depends only on the list's shape — the source's condition, the
 *   search's join, the filters present (and how many values each has), the ranges, the scopes' columns, the sort
 *   keys, the paging mode, the cursor's direction and NULL positions, the fields and the count
 *   mode — never on the values: it is built by TypeORM's query builder once per shape and kept
 *   (at most {@link MAX_LIST_STATEMENTS} per DataSource), and each request runs it with its
 *   parameters, limit and offset (the same text as the query builder writes for that request).
 * `source` is the resource's repository (or it with a fixed condition, {@link ListSource}); `table`
 * is the resource's field table on its entity; `map` turns each raw row (keys: column names; `id`
 * and the table's link columns always present, typed {@link Row}; plus the keys of
 * `options.select`) into the response object. Returns a {@link Page}.
 */
export async function findPage<E extends ObjectLiteral, L extends ColumnOf<E>, T>(
  source: ListSource<E>,
  query: ListQuery,
  table: FieldTable<E, L>,
  map: (row: Row<E, L>) => T,
  visible?: readonly Scope[],
  options: PageOptions = {},
): Promise<Page<T>> {
  const spec: ListSpec = table;
  const alias = spec.alias;
  const { repository, where, params: sourceParams } = 'repository' in source ? source : { repository: source, where: undefined, params: {} };
  const dataSource = repository.manager.connection;
  const metadata = repository.metadata;
  const postgres = dataSource.options.type === 'postgres';
  /** Parameters of every statement: the source's, the custom filters' and the ranges'. */
  const common: Record<string, unknown> = { ...sourceParams };
  const conditions: string[] = [];
  const equality: Conditions = new Map();
  /** Keeps, of the values `column` may take, those in `values` (every equality filter must hold). */
  const narrow = (column: string, values: ReadonlyArray<string | number>) =>
    equality.set(
      column,
      [...(equality.get(column) ?? values)].filter((value) => values.includes(value)),
    );
  for (const [name, values] of Object.entries(query.filters)) {
    const filter = spec.filters[name];
    const param = `f_${name}`;
    if (filter.condition) {
      conditions.push(filter.condition(param));
      common[param] = values;
    } else narrow(filter.column, values);
  }
  // `in` narrows the equality filters as a repeated parameter would; `ne` on an enumeration keeps the other values
  (query.operators ?? []).forEach((filter, i) => {
    const param = `o_${i}`;
    const own = spec.filters[filter.field];
    const enumValues = own?.type === 'enum' ? (own.values ?? []) : undefined;
    if (filter.op === 'in') {
      if (own?.condition) {
        conditions.push(own.condition(param));
        common[param] = filter.value;
      } else narrow(filter.column as string, filter.value);
    } else if (filter.op === 'ne' && enumValues && filter.column) {
      narrow(
        filter.column,
        enumValues.filter((value) => value !== filter.value),
      );
    } else {
      const { sql, params } = operatorSql(filter, filter.column as string, param, postgres);
      conditions.push(sql);
      Object.assign(common, params);
    }
  });
  query.ranges.forEach((range, i) => {
    const param = `r_${i}`;
    const bound = range.type === 'timestamp' ? timestampParam(postgres, param) : `:${param}`;
    conditions.push(`${range.column} ${RANGE_OPERATORS[range.op]} ${bound}`);
    common[param] = range.type === 'timestamp' && !postgres ? sqliteTimestamp(String(range.value)) : range.value;
  });
  // full-text search: a condition, and the rank as the `relevance` sort key's expression
  const searched = query.search && spec.search ? searchSql(spec.search, query.search, postgres) : undefined;
  if (searched) {
    if (searched.condition) conditions.push(searched.condition);
    Object.assign(common, searched.params);
  }
  const sortKeys = query.sort.map((key) => (key.column === RELEVANCE_COLUMN ? { ...key, column: searched?.relevance ?? '0' } : key));
  const scopes = narrowScopes(visible, equality);
  if (scopes.length === 0) {
    return new Page([], query.count === 'none' ? undefined : 0, query, { counted: query.count === 'none' ? 'none' : 'exact', hasNext: false, hasPrev: false });
  }

  const forward = query.cursor?.direction !== 'before';
  const keys = forward ? sortKeys : reversed(sortKeys);
  const isNullable = (column: string) => column !== searched?.relevance && nullable(metadata, alias, column);
  const isTimestamp = (column: string) => timestamp(metadata, column);
  const keyset = query.cursor ? keysetParts(keys, query.cursor.values, isNullable, isTimestamp, postgres) : undefined;
  const columns = new Set(['id', ...spec.always]);
  for (const field of query.fields ?? spec.selectable) for (const column of spec.columns[field] ?? []) columns.add(column);
  const extra = Object.entries(options.select ?? {});
  // everything the statements' text depends on; the values are parameters
  const shape = JSON.stringify([
    tableId(table),
    where ?? null,
    conditions,
    // SQLite's search is a join, not a condition
    searched?.join?.sql ?? null,
    Object.entries(query.filters).map(([name, values]) => [name, values.length]),
    scopes.map((scope) => [...scope].map(([column, values]) => [column, values.length])),
    query.sort.map((key) => [key.column, key.direction]),
    query.cursor ? [query.cursor.direction, query.cursor.values.map((value) => value === null)] : query.style,
    [...columns],
    extra,
  ]);
  /** A query builder on the table with the source's condition, the custom filters and the ranges (to build a statement). */
  const base = (): SelectQueryBuilder<E> => {
    const qb = repository.createQueryBuilder(alias);
    if (searched?.join) qb.innerJoin(searched.join.sql, searched.join.alias, searched.join.on);
    if (where !== undefined) qb.where(where);
    for (const condition of conditions) qb.andWhere(condition);
    return qb;
  };
  const statement = (name: string, build: () => string) => template(dataSource, `${name}\u0000${shape}`, build);

  // the count's disjoint pieces: scope i, minus the scopes before it
  const piece = (i: number): SelectQueryBuilder<E> => {
    const qb = base();
    whereAnyScope(qb, [scopes[i]], 'v0');
    for (let j = 0; j < i; j++) qb.andWhere(`(${scopeSql(scopes[j], `x${j}`).sql}) IS NOT TRUE`);
    return qb;
  };
  const pieceParams = (i: number) => ({
    ...common,
    ...anyScopeParams([scopes[i]], 'v0'),
    ...Object.assign({}, ...scopes.slice(0, i).map((scope, j) => scopeSql(scope, `x${j}`).params)),
  });
  const exactCount = async () => {
    const counts = await Promise.all(
      scopes.map((_, i) =>
        run<{ count: string | number }>(
          dataSource,
          statement(`count ${i}`, () => piece(i).select('COUNT(*)', 'count').getQuery()),
          pieceParams(i),
        ),
      ),
    );
    return counts.reduce((sum, count) => sum + Number(count[0]?.count ?? 0), 0);
  };
  const estimatedCount = async () => {
    let sum = 0;
    for (let i = 0; i < scopes.length; i++) {
      const plan = await run<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(
        dataSource,
        statement(`estimate ${i}`, () => `EXPLAIN (FORMAT JSON) ${piece(i).select('1', 'one').getQuery()}`),
        pieceParams(i),
      );
      sum += Number(plan[0]['QUERY PLAN'][0].Plan['Plan Rows']);
    }
    return sum;
  };
  const count = async (): Promise<{ total: number | undefined; counted: CountMode }> => {
    if (query.count === 'none') return { total: undefined, counted: 'none' };
    if (query.count === 'estimated' && postgres) {
      const estimate = await estimatedCount();
      if (estimate > ESTIMATE_THRESHOLD) return { total: Math.round(estimate), counted: 'estimated' };
    }
    return { total: await exactCount(), counted: 'exact' };
  };

  const nulls = (key: SortKey) => (key.direction === 'ASC' ? 'NULLS LAST' : 'NULLS FIRST');
  const order = (builder: SelectQueryBuilder<E>, constant: readonly string[] = []) => {
    builder.orderBy();
    for (const key of keys) {
      if (constant.includes(key.column)) continue;
      if (isNullable(key.column)) builder.addOrderBy(key.column, key.direction, nulls(key));
      else builder.addOrderBy(key.column, key.direction);
    }
    return builder;
  };
  /** The inner query choosing the page's ids (without position), and its parameters. */
  const ids = () => {
    const qb = base().select(`${alias}.id`, 'id');
    whereAnyScope(qb, scopes, 'v');
    return qb;
  };
  const idsParams = { ...common, ...anyScopeParams(scopes, 'v'), ...keyset?.params };
  /** The page's rows for the ids `idsSql` chooses (with `idsParams`): the columns wanted, the sort keys as `__k<i>`, in order. */
  const rows = (idsSql: string): string => {
    const qb = repository.createQueryBuilder(alias).select(`${alias}.id`, 'id');
    // the rank of the page's rows, for their order and cursors (SQLite: from the search's join)
    if (searched?.join && sortKeys.some((key) => key.column === searched.relevance)) qb.innerJoin(searched.join.sql, searched.join.alias, searched.join.on);
    for (const column of columns) if (column !== 'id') qb.addSelect(`${alias}.${column}`, column);
    for (const [key, expression] of extra) qb.addSelect(expression, key);
    sortKeys.forEach((key, i) => qb.addSelect(postgres && isTimestamp(key.column) ? `CAST(${key.column} AS text)` : key.column, `__k${i}`));
    qb.where(`${alias}.id IN (${idsSql})`);
    return order(qb).getQuery();
  };
  let page: Promise<Array<Record<string, unknown>>>;
  if (keyset && keyset.parts.length > 1) {
    // the parts in order, each from its own index range, until one row more than the page is found
    const found: Array<number | string> = [];
    for (const [p, part] of keyset.parts.entries()) {
      const one = statement(`ids part ${p}`, () => order(ids().andWhere(part.sql), part.nulls).limit(LIMIT_MARK).getQuery());
      found.push(...(await run<{ id: number | string }>(dataSource, one, idsParams, query.limit + 1 - found.length)).map((row) => row.id));
      if (found.length > query.limit) break;
    }
    const pageIds = found.length > 0 ? ':...page_ids' : 'NULL';
    page = run(
      dataSource,
      statement(`rows of ${found.length}`, () => rows(pageIds)),
      { ...(searched?.params ?? {}), page_ids: found },
    );
  } else {
    const rowsSql = statement('rows', () => {
      const inner = ids();
      if (keyset) inner.andWhere(keyset.parts[0].sql);
      order(inner, keyset?.parts[0].nulls).limit(LIMIT_MARK);
      if (query.style !== 'cursor') inner.offset(OFFSET_MARK);
      return rows(inner.getQuery());
    });
    page = run(dataSource, rowsSql, idsParams, query.limit + 1, query.offset);
  }

  const [fetched, counted] = await Promise.all([page, count()]);
  const more = fetched.length > query.limit;
  const pageRows = fetched.slice(0, query.limit);
  if (!forward) pageRows.reverse();
  const positions = pageRows.map((row) =>
    query.sort.map((_, i) => {
      const value = row[`__k${i}`];
      delete row[`__k${i}`];
      return value === null || value === undefined ? null : typeof value === 'number' ? value : String(value);
    }),
  );
  const hasNext = forward ? more : pageRows.length > 0;
  const hasPrev = forward ? pageRows.length > 0 && (query.cursor !== undefined || query.offset > 0) : more;
  return new Page((pageRows as unknown as Array<Row<E, L>>).map(map), counted.total, query, {
    counted: counted.counted,
    hasNext,
    hasPrev,
    first: positions[0],
    last: positions[positions.length - 1],
  });
}
