import { type AccessPolicy, isOwnerOrAdmin } from '../common/access/access-policy.js';

/** What the users policy reads: the id of the user asked for (whether or not it exists). */
export interface UserAccess {
  id: number;
}

/**
 * Who may do what to users (docs/resources/users.md#operations):
 * - read, write (replace, update, delete): the user itself or an admin, anyone else 403 `only the
 *   user itself or an admin may do this` — whether or not the id exists, so the check is made on
 *   the id asked for, before the row is loaded;
 * - setRole (changing `role`): admins only, else 403 `only admins can change role`;
 * - list: admins only (the `admin` role on the operation); `visible` is every user for them.
 */
export const USERS_POLICY: AccessPolicy<UserAccess, 'read' | 'write' | 'setRole'> = {
  resource: 'user',
  rules: {
    read: { allows: (caller, user) => isOwnerOrAdmin(caller, user.id), refusal: () => 'only the user itself or an admin may do this' },
    write: { allows: (caller, user) => isOwnerOrAdmin(caller, user.id), refusal: () => 'only the user itself or an admin may do this' },
    setRole: { allows: (caller) => caller.role === 'admin', refusal: () => 'only admins can change role' },
  },
  visible: (caller) => (caller.role === 'admin' ? undefined : [{ 'u.id': caller.id }]),
};
