import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { NoDatabase } from '../common/openapi/api-errors.decorator.js';
import { Public } from '../common/caller/public.decorator.js';
import { JwtKeys, type PublicJwk } from './jwt-keys.js';

/** `/.well-known/jwks.json` (docs/authentication.md#the-access-token): the RS256 public key; an empty set under HS256. */
@ApiTags('auth')
@Controller('.well-known')
export class WellKnownController {
  constructor(private readonly keys: JwtKeys) {}

  /** The JSON Web Key Set that verifies access tokens (RFC 7517). */
  @Public()
  @NoDatabase()
  @Get('jwks.json')
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({ operationId: 'getJwks', summary: 'Public keys that verify access tokens (JWKS)' })
  @ApiOkResponse({
    description: 'The key set; empty when tokens are HS256 (a shared secret is never published).',
    schema: {
      type: 'object',
      required: ['keys'],
      properties: {
        keys: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              kty: { type: 'string', enum: ['RSA'] },
              n: { type: 'string' },
              e: { type: 'string' },
              alg: { type: 'string', enum: ['RS256'] },
              use: { type: 'string', enum: ['sig'] },
              kid: { type: 'string' },
            },
          },
        },
      },
      example: { keys: [{ kty: 'RSA', n: '0vx7agoebGcQSuu…', e: 'AQAB', alg: 'RS256', use: 'sig', kid: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs' }] },
    },
  })
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.keys.jwk ? [this.keys.jwk] : [] };
  }
}
