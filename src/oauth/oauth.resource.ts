import { defineResource } from '../common/resources/define-resource.js';
import { OAuthAuthorizationCode } from './oauth-authorization-code.entity.js';
import { OAuthRefreshToken } from './oauth-refresh-token.entity.js';

/** The OAuth 2.0 authorization server's protocol endpoints (docs/authentication.md#oauth-20-for-third-party-applications). */
export const OAUTH = defineResource({
  name: 'oauth',
  description:
    'OAuth 2.0 authorization server: authorize (sign-in and consent pages), token, revocation, metadata. Protocol errors are RFC 6749 `{error, error_description}`.',
  scopes: false,
  entities: [OAuthAuthorizationCode, OAuthRefreshToken],
  module: () => import('./oauth.module.js').then((file) => file.OAuthModule),
});
