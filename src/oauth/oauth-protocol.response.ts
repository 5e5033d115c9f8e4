import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { registeredList, registeredText } from '../common/resources/resource-registry.js';

/** The token endpoint's success body (RFC 6749 §5.1), sent with `Cache-Control: no-store`. */
@ApiSchema({ name: 'OAuthToken' })
export class OAuthTokenResponse {
  /** The access token: a JWT of the service with `client_id` and `scope` claims, for `Authorization: Bearer`. */
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2lkIjoxLCJjbGllbnRfaWQiOiJvY18xIiwic2NvcGUiOiJ0b2RvczpyZWFkIn0.c2lnbmF0dXJl' })
  access_token: string;

  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' })
  token_type: 'Bearer';

  /** Seconds until the access token expires (ACCESS_TOKEN_TTL). */
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 86_400, example: 300 })
  expires_in: number;

  /** Single use: each refresh returns a new one; presenting a used one revokes the whole grant. */
  @ApiProperty({ example: 'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s' })
  refresh_token: string;

  /** Space-separated scopes of the access token. */
  @ApiProperty({ example: 'todos:read todos:write', pattern: `^(${registeredText('scopes', '|')})( (${registeredText('scopes', '|')}))*$` })
  scope: string;
}

/**
 * The error body of the OAuth protocol endpoints (RFC 6749 §5.2, RFC 7009 §2.2.1) — the one
 * exception to `ErrorResp`: clients' OAuth libraries read this shape.
 */
@ApiSchema({ name: 'OAuthError' })
export class OAuthErrorResponse {
  /** The RFC 6749 error code. */
  @ApiProperty({
    enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'server_error'],
    example: 'invalid_grant',
  })
  error: string;

  /** What went wrong, for the developer. */
  @ApiProperty({ example: 'Invalid grant: authorization code is invalid' })
  error_description: string;
}

/** The authorization server metadata (RFC 8414 §2) at `/.well-known/oauth-authorization-server`. */
@ApiSchema({ name: 'OAuthServerMetadata' })
export class OAuthServerMetadataResponse {
  @ApiProperty({ format: 'uri', example: 'https://api.example.com' })
  issuer: string;

  @ApiProperty({ format: 'uri', example: 'https://api.example.com/v1/oauth/authorize' })
  authorization_endpoint: string;

  @ApiProperty({ format: 'uri', example: 'https://api.example.com/v1/oauth/token' })
  token_endpoint: string;

  @ApiProperty({ format: 'uri', example: 'https://api.example.com/v1/oauth/revoke' })
  revocation_endpoint: string;

  /** Present when access tokens are RS256: the keys that verify them. */
  @ApiProperty({ format: 'uri', required: false, example: 'https://api.example.com/.well-known/jwks.json' })
  jwks_uri?: string;

  @ApiProperty({ type: [String], example: registeredList('scopes') })
  scopes_supported: string[];

  @ApiProperty({ type: [String], example: ['code'] })
  response_types_supported: string[];

  @ApiProperty({ type: [String], example: ['query'] })
  response_modes_supported: string[];

  @ApiProperty({ type: [String], example: ['authorization_code', 'refresh_token'] })
  grant_types_supported: string[];

  @ApiProperty({ type: [String], example: ['client_secret_basic', 'client_secret_post', 'none'] })
  token_endpoint_auth_methods_supported: string[];

  @ApiProperty({ type: [String], example: ['client_secret_basic', 'client_secret_post', 'none'] })
  revocation_endpoint_auth_methods_supported: string[];

  /** Only S256 (RFC 7636; `plain` is refused). */
  @ApiProperty({ type: [String], example: ['S256'] })
  code_challenge_methods_supported: string[];

  /** The authorization response carries `iss` (RFC 9207). */
  @ApiProperty({ example: true })
  authorization_response_iss_parameter_supported: boolean;

  @ApiProperty({ format: 'uri', example: 'https://api.example.com/docs' })
  service_documentation: string;
}
