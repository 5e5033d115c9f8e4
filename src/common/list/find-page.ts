import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { ListQuery, ListSpec } from './list-query.js';
import { Page } from './page.js';

/**
 * Runs one page of a list (SPEC §4) on a query builder that applies the caller's visibility.
 * Selects only the columns the response needs (those of the requested `fields`, `id` and the
 * spec's `always` columns), adds the equality filters (`IN` for repeated values), the
 * sort (nulls sort as the largest value on every database) with `id` as the last tie-breaker, and
 * `offset`/`limit`; runs the page query and the `COUNT(*)` in parallel. `map` turns each raw row
 * into the response object. Returns a {@link Page}.
 */
export async function findPage<T, E extends ObjectLiteral>(
  qb: SelectQueryBuilder<E>,
  query: ListQuery,
  spec: ListSpec,
  map: (row: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const columns = new Set(['id', ...spec.always]);
  for (const field of query.fields ?? spec.fields) for (const column of spec.columns[field] ?? []) columns.add(column);
  qb.select(`${spec.alias}.id`, 'id');
  for (const column of columns) if (column !== 'id') qb.addSelect(`${spec.alias}.${column}`, column);
  for (const [name, values] of Object.entries(query.filters)) {
    const filter = spec.filters[name];
    const param = `f_${name}`;
    if (filter.condition) qb.andWhere(filter.condition(param), { [param]: values });
    else if (values.length === 1) qb.andWhere(`${filter.column} = :${param}`, { [param]: values[0] });
    else qb.andWhere(`${filter.column} IN (:...${param})`, { [param]: values });
  }
  const countQb = qb.clone().select('COUNT(*)', 'count').orderBy();
  qb.orderBy();
  for (const key of query.sort) {
    qb.addOrderBy(key.column, key.direction, key.direction === 'ASC' ? 'NULLS LAST' : 'NULLS FIRST');
  }
  qb.offset(query.offset).limit(query.limit);
  const [rows, count] = await Promise.all([qb.getRawMany<Record<string, unknown>>(), countQb.getRawOne<{ count: string | number }>()]);
  return new Page(rows.map(map), Number(count?.count ?? 0), query);
}
