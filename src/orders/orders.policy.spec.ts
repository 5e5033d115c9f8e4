import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../test/setup/refusal.js';
import { authorize, authorizeTransition, can } from '../common/access/access-policy.js';
import { ORDER_STATUSES, type OrderStatus } from './order.entity.js';
import { ORDERS_POLICY } from './orders.policy.js';

const owner = { id: 1, role: 'user' as const };
const other = { id: 2, role: 'user' as const };
const admin = { id: 9, role: 'admin' as const };

/** Who may make each allowed move (docs/resources/orders.md#status; anything else is a 409). */
const ALLOWED: Record<string, 'owner' | 'admin'> = {
  'pending→paid': 'owner',
  'pending→cancelled': 'owner',
  'paid→shipped': 'admin',
  'paid→cancelled': 'owner',
  'shipped→delivered': 'admin',
};

describe('ORDERS_POLICY (docs/resources/orders.md)', () => {
  it('the order’s user and admins read and write it; another user gets 403 `order <id> belongs to another user`', () => {
    expect([owner, other, admin].map((caller) => can(ORDERS_POLICY, 'write', caller, { user_id: 1 }))).toEqual([true, false, true]);
    expect(refusal(() => authorize(ORDERS_POLICY, 'read', other, { user_id: 1 }, 3))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'order 3 belongs to another user',
    });
    expect(ORDERS_POLICY.visible(owner)).toEqual([{ 'o.user_id': 1 }]);
    expect(ORDERS_POLICY.visible(admin)).toBeUndefined();
  });

  it.each(ORDER_STATUSES.flatMap((from) => ORDER_STATUSES.map((to) => [from, to] as [OrderStatus, OrderStatus])))(
    '%s → %s: allowed to whom docs/resources/orders.md#status says, else 409',
    (from, to) => {
      const who = ALLOWED[`${from}→${to}`];
      const user = refusal(() => authorizeTransition(ORDERS_POLICY, owner, from, to));
      const byAdmin = refusal(() => authorizeTransition(ORDERS_POLICY, admin, from, to));
      if (who === undefined) {
        for (const result of [user, byAdmin]) expect(result).toEqual({ status: 409, code: 'conflict', message: `cannot change status from ${from} to ${to}` });
      } else {
        expect(byAdmin).toBeUndefined();
        expect(user).toEqual(
          who === 'owner' ? undefined : { status: 403, code: 'forbidden', message: `only an admin can change status from ${from} to ${to}` },
        );
      }
    },
  );
});
