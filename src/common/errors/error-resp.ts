import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES, type ErrorCode } from './api-exception.js';

/** One failing field of a request. */
@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  /** snake_case path of the field, e.g. `name` or `items[0].sku`. */
  @ApiProperty({ example: 'name' })
  field: string;

  /** What is wrong with it. */
  @ApiProperty({ example: 'name is required' })
  message: string;
}

/** The one error body of the API (docs/errors.md#the-body), for every 4xx and 5xx. */
export class ErrorResp {
  /** Human-readable message. */
  @ApiProperty({ example: 'name is required' })
  error: string;

  /** Machine-readable code. */
  @ApiProperty({ enum: Object.values(ERROR_CODES), example: 'bad_request' })
  code: ErrorCode;

  /** Field-level problems, present only for them; lists every failing field. */
  @ApiProperty({ type: [ErrorDetailDto], required: false })
  details?: ErrorDetailDto[];

  /** The request's id, also in the `X-Request-Id` response header. */
  @ApiProperty({ example: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' })
  request_id: string;
}
