import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { CURRENCIES, Order, OrderItem, ORDER_STATUSES } from './order.entity.js';
import { ORDERS_POLICY } from './orders.policy.js';

/**
 * The orders field table (docs/lists.md#fields-filters-and-sorts-per-collection): filters `status`, `user`, `currency`; sort `id`, `created_at`,
 * `updated_at`, `total_cents`. `items` has no column: the service loads the page's items in one extra query.
 */
export const ORDERS_FIELDS = defineFields<Order>()({
  alias: 'o',
  fields: {
    items: { column: null },
    currency: { column: 'currency', filter: { type: 'enum', values: CURRENCIES, description: 'Orders in this currency.', example: 'EUR' } },
    status: { column: 'status', filter: { type: 'enum', values: ORDER_STATUSES, description: 'Orders in this status.', example: 'paid' } },
    total_cents: { column: 'total_cents', range: 'int', sort: true },
    user: { column: 'user_id', filter: { type: 'int', description: 'Orders of this user id (admins; others only ever see their own).', example: 1 } },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['user_id'],
  order: { sort: ['created_at', 'updated_at', 'total_cents'], filters: ['status', 'user', 'currency'] },
});

/** Orders (docs/resources/orders.md): `/v1/orders`, scopes `orders:read` and `orders:write`. */
export const ORDERS = defineResource({
  name: 'orders',
  description: 'Orders with items and a computed total in cents, private to their user.',
  scopes: true,
  entities: [Order, OrderItem],
  fields: ORDERS_FIELDS,
  policy: ORDERS_POLICY,
});
