import { Brackets, type ObjectLiteral, type SelectQueryBuilder, type WhereExpressionBuilder } from 'typeorm';
import type { ColumnOf, FieldTable, Row } from './field-table.js';
import type { ListQuery, ListSpec } from './list-query.js';
import { Page } from './page.js';

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

/** Whether `column` (`alias.name`) of the query's main table may hold NULL; expressions count as nullable. */
function nullable<E extends ObjectLiteral>(qb: SelectQueryBuilder<E>, alias: string, column: string): boolean {
  const [prefix, name] = column.split('.');
  if (prefix !== alias || name === undefined) return true;
  const metadata = qb.expressionMap.mainAlias?.hasMetadata ? qb.expressionMap.mainAlias.metadata : undefined;
  return metadata?.findColumnWithDatabaseName(name)?.isNullable ?? true;
}

/**
 * Runs one page of a list (SPEC §4) on a query builder of the resource's table, in SQL that an
 * index can serve:
 * - `visible` are the rows the caller may read, as {@link Scope}s (undefined: every row, e.g. for
 *   an admin). They are combined with the equality filters into the narrowest equivalent
 *   predicate ({@link narrowScopes}), so a filter that already decides visibility
 *   (`status=published`) leaves a plain `status = 'published'` and no `OR`; conditions already on
 *   `qb` (e.g. the parent article of comments) and custom filter conditions (tags) are ANDed.
 *   A filter that excludes every visible row answers an empty page without a query.
 * - Selects only the columns the response needs (those of the requested `fields`, `id` and the
 *   spec's `always` columns).
 * - Orders by the sort keys, `id` last (in the direction of the first key, see
 *   {@link parseListQuery}); `NULLS LAST`/`NULLS FIRST` (nulls sort as the largest value) only on
 *   nullable columns, so a `(filter columns…, sort column, id)` index serves the order read
 *   forwards or backwards on both databases.
 * - The page's ids are chosen by an inner query that reads only the index (filter, sort and id
 *   columns); the wide columns are fetched for those rows alone, so a deep `offset` skips index
 *   entries rather than rows.
 * - `total` is exact: `COUNT(*)` of the one scope, or the sum of the counts of disjoint pieces
 *   (each scope minus the ones before it), each of which an index on its columns answers alone.
 * `table` is the resource's field table on the entity of `qb`; `map` turns each raw row (keys:
 * column names; `id` and the table's link columns always present, typed {@link Row}) into the
 * response object. Returns a {@link Page}.
 */
export async function findPage<E extends ObjectLiteral, L extends ColumnOf<E>, T>(
  qb: SelectQueryBuilder<E>,
  query: ListQuery,
  table: FieldTable<E, L>,
  map: (row: Row<E, L>) => T,
  visible?: readonly Scope[],
): Promise<Page<T>> {
  const spec: ListSpec = table;
  const alias = spec.alias;
  const equality: Conditions = new Map();
  for (const [name, values] of Object.entries(query.filters)) {
    const filter = spec.filters[name];
    const param = `f_${name}`;
    if (filter.condition) qb.andWhere(filter.condition(param), { [param]: values });
    else equality.set(filter.column, [...(equality.get(filter.column) ?? values)].filter((value) => values.includes(value)));
  }
  const scopes = narrowScopes(visible, equality);
  if (scopes.length === 0) return new Page([], 0, query);

  const counts = scopes.map((scope, i) => {
    const piece = qb.clone().select('COUNT(*)', 'count').orderBy();
    whereAnyScope(piece, [scope], 'v0');
    for (let j = 0; j < i; j++) {
      const before = scopeSql(scopes[j], `x${j}`);
      piece.andWhere(`(${before.sql}) IS NOT TRUE`, before.params);
    }
    return piece.getRawOne<{ count: string | number }>();
  });

  const ids = qb.clone().select(`${alias}.id`, 'id').orderBy();
  whereAnyScope(ids, scopes, 'v');
  const order = (builder: SelectQueryBuilder<E>) => {
    builder.orderBy();
    for (const key of query.sort) {
      if (nullable(qb, alias, key.column)) builder.addOrderBy(key.column, key.direction, key.direction === 'ASC' ? 'NULLS LAST' : 'NULLS FIRST');
      else builder.addOrderBy(key.column, key.direction);
    }
    return builder;
  };
  order(ids).offset(query.offset).limit(query.limit);

  const columns = new Set(['id', ...spec.always]);
  for (const field of query.fields ?? spec.selectable) for (const column of spec.columns[field] ?? []) columns.add(column);
  const rowsQb = qb.clone().select(`${alias}.id`, 'id');
  for (const column of columns) if (column !== 'id') rowsQb.addSelect(`${alias}.${column}`, column);
  rowsQb.where(`${alias}.id IN (${ids.getQuery()})`).setParameters(ids.getParameters());
  order(rowsQb);

  const [rows, ...pieceCounts] = await Promise.all([rowsQb.getRawMany<Row<E, L>>(), ...counts]);
  const total = pieceCounts.reduce((sum, count) => sum + Number(count?.count ?? 0), 0);
  return new Page(rows.map(map), total, query);
}
