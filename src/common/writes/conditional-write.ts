import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral, QueryDeepPartialEntity } from 'typeorm';
import { type ApiException, notFound } from '../errors/api-exception.js';
import { noRowWritten, versionCondition, type WritePreconditions } from './preconditions.js';

/** What a DELETE or UPDATE reports: the number of rows it changed (null/undefined when the driver says nothing). */
export interface WriteResult {
  affected?: number | null;
}

/**
 * Checks that a conditional write changed a row (docs/writes.md#delete: DELETE of a missing resource → 404; a
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

/**
 * The conditional UPDATE of a resource write with its request's `If-Match` (RFC 9110 §13.1.1):
 * evaluates the precondition (`preconditions`, undefined outside a request) against `version`, the version of the row the caller loaded (and
 * authorized: 401/403/404 come first, §13.2.1), then runs one `UPDATE … SET …, version = version + 1
 * WHERE <where> [AND version = <version>]` — with the version condition when a tag was sent — and
 * checks that a row changed. Returns the row's new version (`version + 1`).
 * @throws 428 `precondition_required` (REQUIRE_IF_MATCH, no `If-Match`); 412 `precondition_failed`
 *   when the tag is not the current one, or the row changed or went between load and write;
 *   404 (or `onNone()`'s exception) when an unconditional write found no row.
 */
export async function updateVersioned<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  where: FindOptionsWhere<T>,
  version: number,
  preconditions: WritePreconditions | undefined,
  set: QueryDeepPartialEntity<T>,
  resource: string,
  id: number,
  onNone: () => ApiException = () => notFound(resource, id),
): Promise<number> {
  const condition = versionCondition(preconditions, resource, id, version);
  await updateExisting(manager, entity, { ...where, ...condition } as FindOptionsWhere<T>, set, resource, id, () =>
    noRowWritten(condition, resource, id, onNone),
  );
  return version + 1;
}

/**
 * The conditional DELETE of a resource with its request's `If-Match`, like {@link updateVersioned}:
 * one `DELETE … WHERE <where> [AND version = <version>]`.
 * @throws 428, 412 as {@link updateVersioned}; 404 (or `onNone()`'s exception) when an
 *   unconditional delete found no row.
 */
export async function deleteVersioned<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  where: FindOptionsWhere<T>,
  version: number,
  preconditions: WritePreconditions | undefined,
  resource: string,
  id: number,
  onNone: () => ApiException = () => notFound(resource, id),
): Promise<void> {
  const condition = versionCondition(preconditions, resource, id, version);
  await deleteExisting(manager, entity, { ...where, ...condition } as FindOptionsWhere<T>, resource, id, () => noRowWritten(condition, resource, id, onNone));
}

/**
 * Increments the `version` of every row of `entity` matching the SQL condition `where` (with
 * `parameters`) and sets its `updated_at` to `at` (the time of the write that caused it), in one
 * UPDATE: the cascading bump of representations that embed a row another write changed (an
 * article's tag names, the author summary of v2 articles and comments). Their entity tags change
 * with them, and change sync (`updated_at[gt]=T&sort=updated_at`, docs/lists.md) returns them
 * again, since what a client holds of them is out of date. Changes nothing else.
 */
export async function bumpVersions<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  where: string,
  parameters: Record<string, unknown>,
  at: Date,
): Promise<void> {
  await manager
    .createQueryBuilder()
    .update(entity)
    .set({ version: () => 'version + 1', updated_at: at } as unknown as QueryDeepPartialEntity<T>)
    .where(where, parameters)
    .execute();
}
