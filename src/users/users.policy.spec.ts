import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../test/setup/refusal.js';
import { authorize, can } from '../common/access/access-policy.js';
import { USERS_POLICY } from './users.policy.js';

const self = { id: 1, role: 'user' as const };
const other = { id: 2, role: 'user' as const };
const admin = { id: 9, role: 'admin' as const };

describe('USERS_POLICY (docs/resources/users.md)', () => {
  it('the user itself and admins read and write a user; anyone else 403, decided on the id asked for', () => {
    for (const action of ['read', 'write'] as const) {
      expect([self, other, admin].map((caller) => can(USERS_POLICY, action, caller, { id: 1 }))).toEqual([true, false, true]);
    }
    // an id that may not exist: 403 all the same, never 404 for another user's id
    expect(refusal(() => authorize(USERS_POLICY, 'read', other, { id: 999_999 }, 999_999))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only the user itself or an admin may do this',
    });
  });

  it('only admins change a role, their own included', () => {
    expect([self, admin].map((caller) => can(USERS_POLICY, 'setRole', caller, { id: caller.id }))).toEqual([false, true]);
    expect(refusal(() => authorize(USERS_POLICY, 'setRole', self, { id: 1 }, 1))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only admins can change role',
    });
  });

  it('lists every user for an admin', () => {
    expect(USERS_POLICY.visible(admin)).toBeUndefined();
    expect(USERS_POLICY.visible(other)).toEqual([{ 'u.id': 2 }]);
  });
});
