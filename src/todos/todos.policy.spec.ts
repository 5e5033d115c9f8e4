import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../test/setup/refusal.js';
import { authorize, can } from '../common/access/access-policy.js';
import { TODOS_POLICY } from './todos.policy.js';

const owner = { id: 1, role: 'user' as const };
const other = { id: 2, role: 'user' as const };
const admin = { id: 9, role: 'admin' as const };

describe('TODOS_POLICY (docs/resources/todos.md: private to their owner)', () => {
  it('the owner and admins read and write a todo; another user neither', () => {
    for (const action of ['read', 'write'] as const) {
      expect([owner, other, admin].map((caller) => can(TODOS_POLICY, action, caller, { owner_id: 1 }))).toEqual([true, false, true]);
    }
  });

  it("403 `todo <id> belongs to another user` for another user's; 404 when missing", () => {
    expect(refusal(() => authorize(TODOS_POLICY, 'write', other, { owner_id: 1 }, 5))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'todo 5 belongs to another user',
    });
    expect(refusal(() => authorize(TODOS_POLICY, 'read', admin, null, 5))).toEqual({ status: 404, code: 'not_found', message: 'todo 5 not found' });
  });

  it("lists a user's own todos, every todo for an admin", () => {
    expect(TODOS_POLICY.visible(other)).toEqual([{ 't.owner_id': 2 }]);
    expect(TODOS_POLICY.visible(admin)).toBeUndefined();
  });
});
