import { API_VERSIONS } from '../common/versioning/api-versions.js';

/** The OAuth endpoints' paths, in one place: the HTML forms, the metadata and the docs use them. */
export const OAUTH_PATHS = {
  authorize: '/v1/oauth/authorize',
  signIn: '/v1/oauth/sign-in',
  token: '/v1/oauth/token',
  revoke: '/v1/oauth/revoke',
  metadata: '/.well-known/oauth-authorization-server',
} as const;

/**
 * The authorize endpoint under every API version's prefix (`/v1/oauth/authorize`,
 * `/v2/oauth/authorize`): the sign-in form's `return_to` must be a request to one of them.
 */
export const AUTHORIZE_RETURN_PATTERN = new RegExp(`^/v(${API_VERSIONS.join('|')})/oauth/authorize\\?`);
