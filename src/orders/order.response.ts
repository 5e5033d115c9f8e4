import { ExpandableReference } from '../common/openapi/expandable.js';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { CURRENCIES, type Order, ORDER_STATUSES, type Currency, type OrderStatus } from './order.entity.js';
import { linkPrefix } from '../common/versioning/api-versions.js';

/** One line of an order as the API returns it. Money in cents. */
@ApiSchema({ name: 'OrderItem' })
export class OrderItemResponse {
  @ApiProperty({ example: 'BOOK-0042' })
  sku: string;

  @ApiProperty({ type: 'integer', example: 2, minimum: 1, maximum: 1000 })
  quantity: number;

  /** Price of one unit in cents. */
  @ApiProperty({ type: 'integer', format: 'int64', example: 1999, minimum: 0, maximum: 1_000_000_000 })
  unit_price_cents: number;
}

/** An order as the API returns it (docs/resources/orders.md). Money in integer cents of `currency`. */
@ApiSchema({ name: 'Order' })
export class OrderResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  /** The lines, in the order they were sent. */
  @ApiProperty({ type: [OrderItemResponse] })
  items: OrderItemResponse[];

  @ApiProperty({ enum: CURRENCIES, example: 'EUR' })
  currency: Currency;

  /** Starts `pending`; moves by PATCH (see the operation). */
  @ApiProperty({ enum: ORDER_STATUSES, example: 'pending' })
  status: OrderStatus;

  /** Σ quantity × unit_price_cents, computed by the service. */
  @ApiProperty({ readOnly: true, type: 'integer', format: 'int64', minimum: 0, maximum: 100_000_000_000_000, example: 3998 })
  total_cents: number;

  /** Id of the ordering user. */
  @ExpandableReference('UserSummary', { description: 'The ordering user.', example: 1 })
  user: number;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self` and `user`. */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/orders/1' },
      { rel: 'user', href: '/v{version}/users/1' },
    ],
  })
  links: Link[];
}

/** Maps an order_items row (entity or raw select) to {@link OrderItemResponse}; bigint text → number. */
export function toOrderItemResponse(source: object): OrderItemResponse {
  const row = source as Record<string, unknown>;
  return { sku: row.sku as string, quantity: Number(row.quantity), unit_price_cents: Number(row.unit_price_cents) };
}

/**
 * Maps an orders row (entity or raw select) and its item rows, sorted by position, to
 * {@link OrderResponse}; PostgreSQL's bigint text becomes a number. With list `fields`, columns and
 * items that were not loaded come out empty and are then dropped by the `fields` selection.
 */
export function toOrderResponse(source: Row<Order, 'user_id'>, items?: readonly object[]): OrderResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  const user = Number(row.user_id);
  return {
    id,
    items: (items ?? []).map(toOrderItemResponse),
    currency: row.currency as Currency,
    status: row.status as OrderStatus,
    total_cents: Number(row.total_cents),
    user,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/orders/${id}` },
      { rel: 'user', href: `${prefix}/users/${user}` },
    ],
  };
}
