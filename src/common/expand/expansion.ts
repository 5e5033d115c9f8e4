import type { Type } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AuthUser } from '../caller/auth-user.js';
import type { ApiVersion } from '../versioning/api-versions.js';

/** Most paths one `expand` names (docs/lists.md#expanding-related-resources-expand). */
export const MAX_EXPAND_PATHS = 4;

/** An item of a list page or a single read as the handler answered it, before `fields` and the envelope. */
export type ExpandItem = Record<string, unknown>;

/** What an expander may use: the database, the caller, the served API version and the application's providers. */
export interface ExpandContext {
  dataSource: DataSource;
  caller: AuthUser | undefined;
  version: ApiVersion;
  /** A provider of the application (another resource's service), looked up across modules. */
  get<T>(type: Type<T>): T;
}

/**
 * Expands one path on every item of a page (or the one item of a read), in place: reads what the
 * page's items reference in **one batched statement** — never one per item — and replaces the
 * reference (an id, a name) by the object, or adds the field (an article's `comments`). `nested`
 * are the nested paths asked under it (`comments.author` → `['author']`). An object the caller
 * may not read, or that is gone, leaves the reference as it was.
 */
export type Expander = (items: ExpandItem[], context: ExpandContext, nested: readonly string[]) => Promise<void>;

/**
 * A path a collection may expand — named as the field it fills (`author`, or `comments`, a field
 * only expansion fills), which `fields`, when given, must name — with its expander and the nested
 * paths it takes.
 */
export interface ExpandDef {
  expand: Expander;
  nested?: readonly string[];
}

/** The expandable paths of a collection, `name` and `name.nested`, in the documented order. */
export function expandPaths(spec: Readonly<Record<string, ExpandDef>> | undefined): string[] {
  return Object.entries(spec ?? {}).flatMap(([name, def]) => [name, ...(def.nested ?? []).map((nested) => `${name}.${nested}`)]);
}

/**
 * Runs the expanders of `paths` (top-level names, each with its nested paths) on `items`, one
 * path after the other. Returns the items.
 */
export async function applyExpansions(
  items: ExpandItem[],
  paths: readonly string[],
  spec: Readonly<Record<string, ExpandDef>>,
  context: ExpandContext,
): Promise<ExpandItem[]> {
  if (items.length === 0) return items;
  const top = [...new Set(paths.map((path) => path.split('.')[0]))];
  for (const name of top) {
    const nested = paths.filter((path) => path.startsWith(`${name}.`)).map((path) => path.slice(name.length + 1));
    await spec[name].expand(items, context, nested);
  }
  return items;
}

/**
 * Replaces `item[field]` — an id — by `objects.get(id)` on each item; an id without an object
 * (unreadable, or gone) stays an id, and a field already holding an object is left alone.
 */
export function replaceReferences(items: ExpandItem[], field: string, objects: ReadonlyMap<number, unknown>): void {
  for (const item of items) {
    const id = item[field];
    if (typeof id === 'number' && objects.has(id)) item[field] = objects.get(id);
  }
}

/**
 * Reads the rows of `table` whose `column` is any of `values`, selecting `columns`, in one
 * statement: `= ANY($1)` with an array parameter on PostgreSQL (one statement text whatever the
 * count), `IN (?, …)` on SQLite. For the expanders' batched reads; names are trusted identifiers.
 */
export function rowsWhereIn<R>(
  dataSource: DataSource,
  table: string,
  columns: readonly string[],
  column: string,
  values: ReadonlyArray<string | number>,
): Promise<R[]> {
  const select = `SELECT ${columns.map((name) => `"${name}"`).join(', ')} FROM "${table}" WHERE "${column}"`;
  if (dataSource.options.type === 'postgres') return dataSource.query<R[]>(`${select} = ANY($1)`, [values]);
  return dataSource.query<R[]>(`${select} IN (${values.map(() => '?').join(', ')})`, [...values]);
}

/** The distinct numeric ids in `item[field]` over `items` (objects and absent fields skipped). */
export function referencedIds(items: ExpandItem[], field: string): number[] {
  return [...new Set(items.map((item) => item[field]).filter((id): id is number => typeof id === 'number'))];
}
