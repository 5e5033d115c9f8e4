import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A token pair, the answer to login and refresh (docs/authentication.md#logging-in). */
@ApiSchema({ name: 'TokenPair' })
export class TokenResponse {
  /** Short-lived access token (JWT, HS256) for `Authorization: Bearer`. */
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2lkIjoxfQ.sig' })
  token: string;

  /** Always `Bearer`. */
  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' })
  token_type: 'Bearer';

  /** Seconds until the access token expires. */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 1, maximum: 86_400, example: 300 })
  expires_in: number;

  /** Opaque refresh token for `POST /v{version}/refresh`; works once (rotation). */
  @ApiProperty({ example: 'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s' })
  refresh_token: string;
}
