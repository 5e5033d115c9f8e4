import type { ListSpec } from '../common/list/list-query.js';
import { CURRENCIES, ORDER_STATUSES } from './order.entity.js';

/**
 * The orders list grammar (SPEC §6): filters `status`, `user`, `currency`; sort `id`, `created_at`,
 * `total_cents`. `items` has no column: the service loads the page's items in one extra query.
 */
export const ORDERS_LIST: ListSpec = {
  resource: 'order',
  sortable: { id: 'o.id', created_at: 'o.created_at', total_cents: 'o.total_cents' },
  filters: {
    status: { type: 'enum', values: ORDER_STATUSES, column: 'o.status', description: 'Orders in this status.', example: 'paid' },
    user: { type: 'int', column: 'o.user_id', description: 'Orders of this user id (admins; others only ever see their own).', example: 1 },
    currency: { type: 'enum', values: CURRENCIES, column: 'o.currency', description: 'Orders in this currency.', example: 'EUR' },
  },
  fields: ['items', 'currency', 'status', 'total_cents', 'user', 'created_at', 'updated_at'],
  alias: 'o',
  columns: {
    items: [],
    currency: ['currency'],
    status: ['status'],
    total_cents: ['total_cents'],
    user: ['user_id'],
    created_at: ['created_at'],
    updated_at: ['updated_at'],
  },
  always: ['user_id'],
};
