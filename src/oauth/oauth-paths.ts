/** The OAuth endpoints' paths, in one place: the HTML forms, the metadata and the docs use them. */
export const OAUTH_PATHS = {
  authorize: '/v1/oauth/authorize',
  signIn: '/v1/oauth/sign-in',
  token: '/v1/oauth/token',
  revoke: '/v1/oauth/revoke',
  metadata: '/.well-known/oauth-authorization-server',
} as const;
