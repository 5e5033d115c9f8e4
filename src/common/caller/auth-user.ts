import type { Role } from './roles.js';

/** The credential a request authenticated with (docs/authentication.md#overview). */
export type AuthScheme = 'bearer' | 'api_key' | 'session';

/** The authenticated caller, as guards put it on `req.user`. */
export interface AuthUser {
  id: number;
  role: Role;
  scheme?: AuthScheme;
  /** The scopes a credential is limited to (API keys, OAuth access tokens); undefined means the user's full rights. */
  scopes?: string[];
  /** The API key used, for rate limiting per key. */
  apiKeyId?: number;
  /** The session used (SHA-256 of the `sid` cookie) and its CSRF token. */
  sessionIdHash?: string;
  csrfToken?: string;
  /** The access token's `jti` and `exp` (Unix seconds), when the caller used a JWT. */
  jti?: string;
  exp?: number;
  /** The login (refresh-token family) the access token belongs to. */
  fid?: string;
  /** The OAuth client an OAuth access token was issued to (its `client_id` claim). */
  clientId?: string;
  /**
   * REQUIRE_ADMIN_TOTP: an admin's login without two-factor authentication, which may only enrol
   * (docs/authentication.md#requiring-two-factor-authentication-for-admins).
   */
  totpSetup?: true;
}

/** The access-token payload of docs/authentication.md#the-access-token (`iat`, `exp`, `jti` are added when signing). */
export interface AccessTokenPayload {
  user_id: number;
  role: Role;
  /** Token type: always `access`; a token of another type is never an access token. */
  typ: 'access';
  /** The login it was issued for (its refresh-token family), revoked together at logout. */
  fid: string;
  iat: number;
  /** Issued at in epoch milliseconds: when the user's authority was read (see issuedAtClaims). */
  iat_ms?: number;
  exp: number;
  jti: string;
  /** OAuth access tokens only: the client the token was issued to, and its space-separated scopes. */
  client_id?: string;
  scope?: string;
  /** Present (true) on a login that may only enrol in two-factor authentication (REQUIRE_ADMIN_TOTP). */
  totp_setup?: true;
}
