import type { ObjectLiteral, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';

/**
 * Inserts one row of `repository`'s entity with exactly `values` and returns its generated
 * integer `id`, in one statement: `INSERT … RETURNING "id"` on PostgreSQL, the insert's
 * `lastInsertRowid` on SQLite. Unlike `Repository.insert`, nothing is read back: TypeORM
 * otherwise re-reads the columns that have database defaults, which on SQLite is a second
 * `SELECT` with the new id written into its text — a statement prepared anew for every insert that
 * also pushes the prepared statements of other queries out of TypeORM's cache. For callers that
 * write every column themselves (the response is the row they inserted).
 * @throws what the insert throws (constraint violations, database unavailable — see database-errors.ts)
 */
export async function insertRow<T extends ObjectLiteral>(repository: Repository<T>, values: QueryDeepPartialEntity<T>): Promise<number> {
  const returning = repository.manager.connection.driver.isReturningSqlSupported('insert');
  const insert = repository.createQueryBuilder().insert().values(values).updateEntity(false);
  const result = await (returning ? insert.returning('id') : insert).execute();
  const raw: unknown = result.raw;
  const id = returning ? (raw as { id: number | string }[])[0].id : (raw as number | bigint);
  return Number(id);
}
