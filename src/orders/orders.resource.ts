import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { CURRENCIES, Order, OrderItem, ORDER_STATUSES } from './order.entity.js';
import { OrdersService } from './orders.service.js';
import { userReference } from '../users/user-summary.response.js';

/**
 * The orders field table (docs/lists.md#fields-filters-and-sorts-per-collection): filters `status`, `user`, `currency` (and `status[ne|in]`, `currency[ne|in]`, `user[in]`); sort `id`, `created_at`,
 * `updated_at`, `total_cents`. `items` has no column: the service loads the page's items in one extra query.
 */
export const ORDERS_FIELDS = defineFields<Order>()({
  alias: 'o',
  fields: {
    items: { column: null },
    currency: {
      column: 'currency',
      operators: ['ne', 'in'],
      filter: { type: 'enum', values: CURRENCIES, description: 'Orders in this currency.', example: 'EUR' },
    },
    status: {
      column: 'status',
      operators: ['ne', 'in'],
      filter: { type: 'enum', values: ORDER_STATUSES, description: 'Orders in this status.', example: 'paid' },
    },
    total_cents: { column: 'total_cents', range: 'int', sort: true },
    user: {
      column: 'user_id',
      operators: ['in'],
      filter: { type: 'int', description: 'Orders of this user id (admins; others only ever see their own).', example: 1 },
    },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['user_id'],
  order: { sort: ['created_at', 'updated_at', 'total_cents'], filters: ['status', 'user', 'currency'] },
  expand: { user: userReference('user') },
});

/** Orders (docs/resources/orders.md): `/v1/orders`, scopes `orders:read` and `orders:write`. */
export const ORDERS = defineResource({
  name: 'orders',
  description: 'Orders with items and a computed total in cents, private to their user.',
  scopes: true,
  entities: [Order, OrderItem],
  module: () => import('./orders.module.js').then((file) => file.OrdersModule),
  events: {
    'order.created': 'an order is created',
    'order.updated': "a pending order's items or currency change",
    'order.paid': "the order's status moves to paid",
    'order.shipped': "the order's status moves to shipped",
    'order.delivered': "the order's status moves to delivered",
    'order.cancelled': "the order's status moves to cancelled",
    'order.deleted': 'an order is deleted',
  },
  versioned: ['Order'],
  fields: ORDERS_FIELDS,
  listPlans: [
    {
      name: 'orders as their owner',
      caller: 'user',
      visible: 'o.user_id = :caller',
      index: 'idx_orders_user_id_updated_at_id',
      list: (app, query, caller) => app.get(OrdersService).list(query, caller),
    },
    {
      name: 'orders as an admin',
      caller: 'admin',
      visible: '1 = 1',
      index: 'idx_orders_updated_at_id',
      list: (app, query, caller) => app.get(OrdersService).list(query, caller),
    },
  ],
  serviceTier: (tier) => new OrdersService(tier.dataSource, tier.outbox),
});
