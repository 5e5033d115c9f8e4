import { ApiHideProperty, ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsIn, IsNotEmpty, IsString, ValidateNested } from 'class-validator';
import { IsOmittable, ReadOnlyProperty } from '../../common/decorators/validation.decorators.js';
import { CURRENCIES, ORDER_STATUSES, type Currency, type OrderStatus } from '../order.entity.js';
import { OrderItemDto } from './order-item.dto.js';

/** Most lines one order may have (docs/resources/orders.md). */
export const MAX_ORDER_ITEMS = 100;

/**
 * What every full order body carries: the lines and the currency. The owner and the computed total
 * a client got from a GET are accepted and ignored (docs/writes.md#read-only-and-unknown-fields).
 */
abstract class OrderContentDto {
  /** The owner is the caller; a `user` sent is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare user?: never;

  /** Always Σ quantity × unit_price_cents; a `total_cents` sent is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare total_cents?: never;

  /**
   * 1-100 lines, kept in the order sent. Not an array, or a line that is not an object → 400;
   * an empty array or more than 100 lines → 422.
   */
  @ApiProperty({
    type: [OrderItemDto],
    minItems: 1,
    maxItems: MAX_ORDER_ITEMS,
    description: '1-100 lines, kept in the order sent; total_cents = Σ quantity × unit_price_cents.',
    example: [{ sku: 'BOOK-0042', quantity: 2, unit_price_cents: 1999 }],
  })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ORDER_ITEMS)
  @ValidateNested({ each: true, message: '$property must be an object' })
  @Type(() => OrderItemDto)
  items: OrderItemDto[];

  /** ISO 4217 code of every price in the order; another value → 422. */
  @ApiProperty({ enum: CURRENCIES, example: 'EUR', description: 'ISO 4217 code of every price in the order.' })
  @IsNotEmpty()
  @IsString()
  @IsIn(CURRENCIES)
  currency: Currency;
}

/**
 * Body of `POST /v1/orders` (docs/resources/orders.md). The order starts `pending`: `status` may be sent only
 * as `pending` (another value → 422 "orders start pending"); `user` and `total_cents` are ignored.
 */
@ApiSchema({ name: 'CreateOrderBody' })
export class CreateOrderDto extends OrderContentDto {
  /** Only `pending`, the initial status; may be omitted. */
  @ApiProperty({ required: false, enum: ['pending'], default: 'pending', example: 'pending' })
  @IsOmittable()
  @IsString()
  @IsIn(['pending'], { message: 'status must be pending: orders start pending' })
  status?: 'pending';
}

/**
 * Body of `PUT /v1/orders/{id}`: the whole order (docs/writes.md#put-replace). `items` and `currency` may differ from
 * the stored ones only while the order is `pending` (else 409); `status` follows the transition
 * rules, and an omitted one means `pending`, the initial status.
 */
@ApiSchema({ name: 'ReplaceOrderBody' })
export class ReplaceOrderDto extends OrderContentDto {
  /** Target status; omitted → `pending`, the initial status (docs/writes.md#put-replace). Moves as for PATCH. */
  @ApiProperty({
    required: false,
    enum: ORDER_STATUSES,
    example: 'pending',
    description: 'Target status; omitted → pending, the initial status. Moves as for PATCH.',
  })
  @IsOmittable()
  @IsString()
  @IsIn(ORDER_STATUSES)
  status?: OrderStatus;
}

/**
 * Body of `PATCH /v1/orders/{id}` (JSON merge patch): any subset of `items` (replaces all lines),
 * `currency` and `status`; none of them is nullable (`null` → 400). Items and currency are applied
 * first (only while `pending`), then the status move, in one transaction.
 */
@ApiSchema({ name: 'UpdateOrderBody' })
export class UpdateOrderDto extends PartialType(ReplaceOrderDto, { skipNullProperties: false }) {
  /** Target status; omitted = unchanged. Validation is inherited from {@link ReplaceOrderDto}. */
  @ApiProperty({ required: false, enum: ORDER_STATUSES, example: 'paid', description: 'Target status; omitted = unchanged.' })
  declare status?: OrderStatus;
}
