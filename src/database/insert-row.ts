import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata.js';
import type { ObjectLiteral, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';

/** One entity's `INSERT` for one set of property names: its SQL and the columns of its parameters. */
interface InsertStatement {
  readonly sql: string;
  readonly columns: readonly ColumnMetadata[];
  /** Version columns the caller did not set: written as 1, as TypeORM's insert does. */
  readonly versions: number;
  readonly returning: boolean;
}

const statements = new WeakMap<EntityMetadata, Map<string, InsertStatement>>();

/**
 * Builds (once per entity and set of property names) the `INSERT` for `keys` of `metadata`'s
 * entity: the columns named, plus any version column left out (set to 1); every other column takes
 * its database default, which is what TypeORM's query builder writes for a missing value (`DEFAULT`
 * on PostgreSQL, the column's declared default on SQLite).
 * @throws Error when a key is not a column of the entity (a programming error)
 */
function statementFor(repository: Repository<ObjectLiteral>, keys: readonly string[]): InsertStatement {
  const { metadata } = repository;
  let byKeys = statements.get(metadata);
  if (!byKeys) statements.set(metadata, (byKeys = new Map()));
  const cacheKey = keys.join('\0');
  const known = byKeys.get(cacheKey);
  if (known) return known;
  const driver = repository.manager.connection.driver;
  const columns = keys.map((key) => {
    const column = metadata.findColumnWithPropertyName(key);
    if (!column || !column.isInsert) throw new Error(`insertRow: ${metadata.name}.${key} is not an insertable column`);
    return column;
  });
  const versions = metadata.columns.filter((c) => c.isVersion && !columns.includes(c));
  const names = [...columns, ...versions].map((c) => driver.escape(c.databaseName));
  const values = [...columns, ...versions].map((_, index) => driver.createParameter(`p${index}`, index));
  const returning = driver.isReturningSqlSupported('insert');
  const sql = `INSERT INTO ${driver.escape(metadata.tableName)} (${names.join(', ')}) VALUES (${values.join(', ')})${returning ? ` RETURNING ${driver.escape('id')}` : ''}`;
  const statement = { sql, columns, versions: versions.length, returning };
  byKeys.set(cacheKey, statement);
  return statement;
}

/**
 * Inserts one row of `repository`'s entity with exactly `values` (properties that are `undefined`
 * are left to the database default) and returns its generated integer `id`, in one statement:
 * `INSERT … RETURNING "id"` on PostgreSQL, the insert's `lastInsertRowid` on SQLite. The SQL is
 * built once per entity and set of properties (so it is one prepared statement on either
 * database), and each value goes through the driver's `preparePersistentValue` for its column, as
 * TypeORM's query builder does (dates, transformers). Unlike `Repository.insert`, nothing is read
 * back: TypeORM otherwise re-reads the columns that have database defaults, which on SQLite is a
 * second `SELECT` with the new id written into its text — a statement prepared anew for every
 * insert that also pushes the prepared statements of other queries out of TypeORM's cache. For
 * callers that write every column themselves (the response is the row they inserted).
 * @throws what the insert throws (a TypeORM `QueryFailedError` for constraint violations or an
 *   unavailable database — see database-errors.ts)
 */
export async function insertRow<T extends ObjectLiteral>(repository: Repository<T>, values: QueryDeepPartialEntity<T>): Promise<number> {
  const { sql, parameters, returning } = insertStatement(repository, values);
  const raw: unknown = await repository.manager.query(sql, parameters);
  const id = returning ? (raw as { id: number | string }[])[0].id : (raw as number | bigint);
  return Number(id);
}

/**
 * The statement {@link insertRow} runs for `values`, without running it: its SQL (`INSERT …
 * RETURNING "id"` where the database returns rows — PostgreSQL —, else a plain `INSERT`), its
 * positional parameters, and whether it returns the id. For a caller that sends the insert as part
 * of a larger statement (a data-modifying CTE on PostgreSQL).
 * @throws Error when a key is not a column of the entity (a programming error)
 */
export function insertStatement<T extends ObjectLiteral>(
  repository: Repository<T>,
  values: QueryDeepPartialEntity<T>,
): { sql: string; parameters: unknown[]; returning: boolean } {
  const given = values as Record<string, unknown>;
  const keys = Object.keys(given).filter((key) => given[key] !== undefined);
  const statement = statementFor(repository as Repository<ObjectLiteral>, keys);
  const driver = repository.manager.connection.driver;
  const parameters: unknown[] = statement.columns.map((column) => driver.preparePersistentValue(given[column.propertyName], column));
  for (let i = 0; i < statement.versions; i++) parameters.push(1);
  return { sql: statement.sql, parameters, returning: statement.returning };
}
