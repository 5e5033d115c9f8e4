import { ownedPolicy, type TransitionTable } from '../common/access/access-policy.js';
import type { Order, OrderStatus } from './order.entity.js';

/**
 * Status moves of orders (docs/resources/orders.md#status) and who may make them: `writer` = the order's user or an admin
 * (whoever may write the order), `admin` = admins only. Any move not listed — a "move" to the
 * current status included — is a 409.
 */
export const ORDER_TRANSITIONS: TransitionTable<OrderStatus> = {
  pending: { paid: 'writer', cancelled: 'writer' },
  paid: { shipped: 'admin', cancelled: 'writer' },
  shipped: { delivered: 'admin' },
  delivered: {},
  cancelled: {},
};

/**
 * Who may do what to orders (docs/resources/orders.md#operations): private to their user — the user and admins read and
 * write, anyone else gets 403 `order <id> belongs to another user`; a non-admin lists only its own
 * (the list query's alias is `o`); status moves by {@link ORDER_TRANSITIONS}.
 */
export const ORDERS_POLICY = ownedPolicy<Pick<Order, 'user_id'>, OrderStatus>({
  resource: 'order',
  ownerOf: (order) => order.user_id,
  column: 'o.user_id',
  transitions: ORDER_TRANSITIONS,
});
