import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module.js';
import { UsersModule } from '../users/users.module.js';
import { OAuthClientsController } from './oauth-clients.controller.js';
import { OAUTH_CLIENTS } from './oauth-clients.resource.js';
import { OAuthClientsService } from './oauth-clients.service.js';
import { OAuthGrantsController } from './oauth-grants.controller.js';
import { OAUTH_GRANTS } from './oauth-grants.resource.js';
import { OAuthGrantsService } from './oauth-grants.service.js';
import { OAuthMetadataController } from './oauth-metadata.controller.js';
import { OAuthController } from './oauth.controller.js';
import { OAuthModel } from './oauth.model.js';
import { OAUTH } from './oauth.resource.js';
import { OAuthService } from './oauth.service.js';

/**
 * OAuth 2.0 authorization code with PKCE: the service is the authorization server
 * (client registry, authorize/consent, token, revocation, RFC 8414 metadata) and the resource
 * server (its access tokens are the service's JWTs, accepted by the global guard and limited by
 * ScopeGuard). The protocol engine is @node-oauth/oauth2-server; this module is its TypeORM model,
 * the consent step and the wiring.
 */
@Module({
  imports: [
    AuthModule,
    UsersModule,
    JwtModule.register({}),
    TypeOrmModule.forFeature([...OAUTH.entities, ...OAUTH_CLIENTS.entities, ...OAUTH_GRANTS.entities]),
  ],
  controllers: [OAuthController, OAuthMetadataController, OAuthClientsController, OAuthGrantsController],
  providers: [OAuthClientsService, OAuthGrantsService, OAuthModel, OAuthService],
})
export class OAuthModule {}
