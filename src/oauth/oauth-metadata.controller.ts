import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/caller/public.decorator.js';
import { OAuthServerMetadataResponse } from './oauth-protocol.response.js';
import { OAuthService } from './oauth.service.js';

/** `/.well-known/oauth-authorization-server` (RFC 8414): what OAuth clients discover. */
@ApiTags('oauth')
@Controller('.well-known')
export class OAuthMetadataController {
  constructor(private readonly oauth: OAuthService) {}

  /** The authorization server metadata: endpoints, scopes, grant types, PKCE methods (S256 only). */
  @Public()
  @Get('oauth-authorization-server')
  @ApiOperation({ operationId: 'getAuthorizationServerMetadata', summary: 'OAuth 2.0 authorization server metadata (RFC 8414)' })
  @ApiOkResponse({
    type: OAuthServerMetadataResponse,
    headers: {
      'Cache-Control': {
        description: '`public, max-age=300` with OAUTH_ISSUER set, else `no-store` (the issuer is then the request’s origin).',
        schema: { type: 'string', enum: ['public, max-age=300', 'no-store'], example: 'public, max-age=300' },
      },
    },
  })
  metadata(@Req() req: Request, @Res({ passthrough: true }) res: Response): OAuthServerMetadataResponse {
    res.setHeader('Cache-Control', this.oauth.issuerConfigured ? 'public, max-age=300' : 'no-store');
    return this.oauth.metadata(this.oauth.issuer(req));
  }
}
