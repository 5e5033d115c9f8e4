import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsDefined, IsInt, IsNotEmpty, IsString, Max, MaxLength, Min } from 'class-validator';

/** Largest accepted `unit_price_cents` (10,000,000.00 in major units), so a total stays an exact integer. */
export const MAX_UNIT_PRICE_CENTS = 1_000_000_000;

/** Largest accepted `quantity` of one order line (docs/resources/orders.md). */
export const MAX_QUANTITY = 1000;

/**
 * One line of an order body (docs/resources/orders.md). A missing, `null` or wrongly typed value (a string or
 * a fraction for a number) → 400; a value out of range → 422; an unknown property → 400. Errors name
 * the path, e.g. `items[1].quantity`.
 */
@ApiSchema({ name: 'OrderItemBody' })
export class OrderItemDto {
  /** Stock-keeping unit, 1-64 characters. */
  @ApiProperty({ example: 'BOOK-0042', minLength: 1 })
  @IsNotEmpty()
  @IsString()
  @MaxLength(64)
  sku: string;

  /** Integer, 1-1000. */
  @ApiProperty({ type: 'integer', example: 2, maximum: MAX_QUANTITY })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(MAX_QUANTITY)
  quantity: number;

  /** Price of one unit in cents (minor units of the order's currency), integer 0-1,000,000,000. */
  @ApiProperty({ type: 'integer', format: 'int64', example: 1999, maximum: MAX_UNIT_PRICE_CENTS })
  @IsDefined()
  @IsInt()
  @Min(0)
  @Max(MAX_UNIT_PRICE_CENTS)
  unit_price_cents: number;
}
