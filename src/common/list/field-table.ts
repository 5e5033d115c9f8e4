import type { ExpandDef } from '../expand/expansion.js';
import { type FilterOperator, type FilterSpec, type ListSpec, type OperatorSpec, type RangeSpec, RELEVANCE, RELEVANCE_COLUMN } from './list-query.js';

type ColumnValue = string | number | boolean | bigint | Date | null | undefined;

/**
 * The properties of entity `E` that are columns of its table (scalar or timestamp values; relation
 * properties such as `owner?: User` are left out): what a field of a {@link FieldTable} may read.
 */
export type ColumnOf<E> = { [K in keyof E]-?: E[K] extends ColumnValue ? K : never }[keyof E] & string;

/** A column value as a raw select returns it: timestamps may come as strings, booleans as 0/1 (SQLite). */
type Raw<T> = T extends Date ? Date | string : T extends boolean ? boolean | number : T;

/**
 * A row of entity `E` as a list or a read hands it to the response mapper: `id` and the link
 * columns `L` always (the field table's `links`), any other column only when it was selected
 * (a `fields=` request selects fewer). An entity instance is such a row too. A mapper declares
 * the columns its links need, e.g. `toTodoResponse(row: Row<Todo, 'owner_id'>)`, so passing it to
 * {@link findPage} with a table whose `links` lack `owner_id` is a type error.
 */
export type Row<E, L extends ColumnOf<E> = never> = { readonly [K in ColumnOf<E> as K extends L | 'id' ? K : never]: Raw<E[K]> } & {
  readonly [K in ColumnOf<E>]?: Raw<E[K]>;
};

/** How the values of a range filter are parsed: an integer, or an ISO 8601 timestamp with a zone. */
export type RangeType = 'int' | 'timestamp';

/** How a filter's values are parsed: an integer (ids, numbers), free text, or one of `values`. */
type FilterType = { type: 'enum'; values: readonly string[] } | { type: 'int' | 'string'; values?: never };

/** An equality filter on the field's column (docs/lists.md#filters), as the list grammar parses and documents it. */
export type FieldFilter = FilterType & {
  /** Shown in the OpenAPI document (the parameter's description). */
  description: string;
  /** Shown in the OpenAPI document. */
  example: string | number;
};

/**
 * A filter with its own SQL condition instead of equality on a column, for filters across a
 * relation (articles carrying a tag): `condition` takes the parameter name, to be used as
 * `(:...name)`, the list of accepted values.
 */
export type ConditionFilter = FieldFilter & { condition: (param: string) => string };

/**
 * One entry of a field table, keyed by its API name:
 * - `column`: the entity property (= column) it reads; `null` for a field the service fills from
 *   other rows (an article's `tags`, an order's `items`) or a filter with its own condition;
 * - `sort`: may be named in `sort` (needs a column);
 * - `filter`: an equality filter of the same name (or a {@link ConditionFilter} without column);
 * - `range`: the field is ordered and takes the range filters `field[gte]`, `[gt]`, `[lte]`, `[lt]`,
 *   their values parsed as this type (needs a column);
 * - `operators`: the filter operators it takes (docs/lists.md#filter-operators): `ne` and `in`
 *   need the equality `filter` (their values parse as its do), `null` a nullable column, `prefix`
 *   and `contains` a text column; a field without column takes only `in`;
 * - `select`: may be named in `fields` (default true; false for a filter that is no field).
 */
export type FieldDef<E> =
  | { column: ColumnOf<E>; sort?: boolean; filter?: FieldFilter; range?: RangeType; operators?: readonly FilterOperator[]; select?: boolean }
  | { column: null; sort?: never; filter?: ConditionFilter; range?: never; operators?: readonly 'in'[]; select?: boolean };

/**
 * A resource's field table, checked by the compiler against entity `E`, with the lookups the list
 * grammar reads ({@link ListSpec}) derived from it once. `L` are the columns its `links` need.
 */
export interface FieldTable<E, L extends ColumnOf<E> = never> extends ListSpec {
  /** The link columns: selected in every list query, whatever `fields` asks for. */
  readonly always: readonly L[];
  /** Type only (never set): the row a list of this table hands to its mapper. */
  readonly row?: Row<E, L>;
}

/** What {@link defineFields} takes: the query alias, the fields, the link columns. */
export interface FieldTableInput<E, F extends Readonly<Record<string, FieldDef<E>>>, L extends ColumnOf<E>> {
  /** Query-builder alias of the table (`t`); the services' visibility scopes use it too. */
  alias: string;
  /**
   * The fields besides `id` (always selected, sortable and the last tie-breaker), in the order
   * `fields` is documented; sort keys and filters follow the same order unless `order` says otherwise.
   */
  fields: F;
  /** The columns the response's links need (e.g. `owner_id` for the `owner` link): always selected. */
  links: readonly L[];
  /**
   * The documented order of the sort keys (after `id`) and of the filters, when it differs from
   * the order of `fields` (it shows in the OpenAPI document and in error messages). Each must name
   * exactly the sortable, resp. filter, entries.
   */
  order?: { sort?: readonly (keyof F & string)[]; filters?: readonly (keyof F & string)[] };
  /**
   * Full-text search with `q` (docs/lists.md#full-text-search-q) over these text fields (columns),
   * whose index the search migrations of table `table` write: the side table `<table>_search` of
   * stored `tsvector`s on PostgreSQL, the FTS5 table `<table>_fts` on SQLite. Adds the sort key `relevance`.
   */
  search?: { table: string; fields: readonly (keyof F & string)[] };
  /**
   * The related resources `expand` may embed (docs/lists.md#expanding-related-resources-expand):
   * path → its expander, nested paths, and whether it replaces the field of the same name.
   */
  expand?: Readonly<Record<string, ExpandDef>>;
}

function ordered(kind: string, declared: string[], order: readonly string[] | undefined): string[] {
  if (!order) return declared;
  const same = order.length === declared.length && declared.every((name) => order.includes(name));
  if (!same) throw new Error(`field table: order.${kind} must name exactly ${declared.join(', ') || 'nothing'} (got ${order.join(', ')})`);
  return [...order];
}

/**
 * Declares a resource's field table (docs/lists.md, one entry per API field): which
 * entity column each field reads, which sort, which filter (type, enum values, description,
 * example), which may be picked with `fields`, and the columns its links need. Curried so that
 * the entity is named and the fields are inferred: `defineFields<Todo>()({ alias: 't', … })`.
 * A column that is no property of the entity, a sortable field without a column, an enum filter
 * without values or a link column of another table is a compile error.
 * Returns the table with the lookups the grammar reads: `sortable` (`id` first; name →
 * `alias.column`), `filters` (name → spec with `alias.column`), `ranges` (name → type and
 * `alias.column`; `relevance` last when the table searches), `operators` (name → operators, type and
 * `alias.column`), `search` (the searched fields and their indexes), `selectable`, `columns` (field →
 * columns to select), `always` (= `links`).
 * @throws Error at import time when `order` does not name exactly the sortable or filter entries,
 * or a field takes `ne` or `in` without an equality filter.
 */
export function defineFields<E>() {
  return <const F extends Readonly<Record<string, FieldDef<E>>>, const L extends ColumnOf<E> = never>(input: FieldTableInput<E, F, L>): FieldTable<E, L> => {
    const { alias } = input;
    const entries = Object.entries(input.fields) as Array<[string, FieldDef<E>]>;
    const field = (name: string) => input.fields[name] as FieldDef<E>;
    const sortNames = ordered(
      'sort',
      entries.filter(([, def]) => def.sort).map(([name]) => name),
      input.order?.sort,
    );
    const filterNames = ordered(
      'filters',
      entries.filter(([, def]) => def.filter).map(([name]) => name),
      input.order?.filters,
    );
    const sortable: Record<string, string> = { id: `${alias}.id` };
    for (const name of sortNames) sortable[name] = `${alias}.${field(name).column}`;
    const filters: Record<string, FilterSpec> = {};
    for (const name of filterNames) {
      const def = field(name);
      const { type, values, description, example } = def.filter!;
      const parsed = { type, description, example, ...(values !== undefined && { values }) };
      filters[name] =
        def.column === null ? { ...parsed, condition: (def.filter as ConditionFilter).condition } : { ...parsed, column: `${alias}.${def.column}` };
    }
    const ranges: Record<string, RangeSpec> = {};
    for (const [name, def] of entries) if (def.column !== null && def.range) ranges[name] = { type: def.range, column: `${alias}.${def.column}` };
    const operators: Record<string, OperatorSpec> = {};
    for (const [name, def] of entries) {
      if (!def.operators?.length) continue;
      const needsFilter = def.operators.filter((op) => op === 'ne' || op === 'in');
      if (needsFilter.length > 0 && !def.filter) throw new Error(`field table: ${name}[${needsFilter.join('], [')}] needs the equality filter ${name}`);
      const { type, values } = def.filter ?? { type: 'string' as const, values: undefined };
      operators[name] = {
        ops: [...def.operators],
        type,
        ...(values !== undefined && { values }),
        ...(def.column !== null && { column: `${alias}.${def.column}` }),
      };
    }
    const selectable = entries.filter(([, def]) => def.select !== false).map(([name]) => name);
    const columns = Object.fromEntries(selectable.map((name) => [name, field(name).column === null ? [] : [field(name).column as string]]));
    const search = input.search && {
      fields: [...input.search.fields],
      columns: input.search.fields.map((name) => `${alias}.${String(field(name).column)}`),
      fts: `${input.search.table}_fts`,
      vectors: `${input.search.table}_search`,
      id: `${alias}.id`,
    };
    if (search) sortable[RELEVANCE] = RELEVANCE_COLUMN;
    return {
      alias,
      sortable,
      filters,
      ranges,
      operators,
      ...(search && { search }),
      ...(input.expand && { expand: input.expand }),
      selectable,
      columns,
      always: [...input.links],
    };
  };
}
