import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral, QueryDeepPartialEntity } from 'typeorm';
import { type ApiException, notFound } from '../errors/api-exception.js';

/** What a DELETE or UPDATE reports: the number of rows it changed (null/undefined when the driver says nothing). */
export interface WriteResult {
  affected?: number | null;
}

/**
 * Checks that a conditional write changed a row (SPEC §5: DELETE of a missing resource → 404; a
 * write decides in one statement, so of N concurrent writes that need the same row state exactly
 * one succeeds). Returns nothing when `result.affected` ≥ 1.
 * @throws the exception `onNone()` gives (e.g. 404 `not_found`, 409 `conflict`) when no row changed.
 */
export function requireAffected(result: WriteResult, onNone: () => ApiException): void {
  if (!result.affected) throw onNone();
}

/**
 * `DELETE FROM <entity> WHERE <where>` in one statement, reporting whether a row went: the shared
 * delete of every resource. `where` carries the id and any further condition (owner, status), so a
 * row that vanished or changed between the caller's access check and the delete is not deleted
 * twice: of N concurrent deletes of one row exactly one returns, the others throw.
 * @param manager the entity manager (or a transaction's) to run on.
 * @throws 404 `not_found` `<resource> <id> not found` when no row matched (or `onNone()`'s exception).
 */
export async function deleteExisting<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  where: FindOptionsWhere<T>,
  resource: string,
  id: number,
  onNone: () => ApiException = () => notFound(resource, id),
): Promise<void> {
  requireAffected(await manager.delete(entity, where), onNone);
}

/**
 * `UPDATE <entity> SET <set> WHERE <where>` in one statement, reporting whether a row changed: a
 * write to a row deleted since it was read answers 404 instead of a stale 200.
 * @throws 404 `not_found` `<resource> <id> not found` when no row matched (or `onNone()`'s exception).
 */
export async function updateExisting<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  where: FindOptionsWhere<T>,
  set: QueryDeepPartialEntity<T>,
  resource: string,
  id: number,
  onNone: () => ApiException = () => notFound(resource, id),
): Promise<void> {
  requireAffected(await manager.update(entity, where, set), onNone);
}
