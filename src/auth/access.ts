import { forbidden, notFound } from '../common/errors/api-exception.js';
import type { AuthUser } from './auth-user.js';

/** True when the caller is an admin or the owner `ownerId` (SPEC §3 "role and ownership"). */
export function isOwnerOrAdmin(user: AuthUser, ownerId: number): boolean {
  return user.role === 'admin' || user.id === ownerId;
}

/**
 * The ownership check in one place: takes a loaded row (or null), the caller and the row's owner
 * id; returns the row.
 * @throws 404 `not_found` when the row is null; 403 `forbidden` when the caller is neither its
 *   owner nor an admin.
 */
export function requireOwned<T>(row: T | null, user: AuthUser, ownerOf: (row: T) => number, resource: string, id: number): T {
  if (row === null) throw notFound(resource, id);
  if (!isOwnerOrAdmin(user, ownerOf(row))) throw forbidden(`${resource} ${id} belongs to another user`);
  return row;
}
