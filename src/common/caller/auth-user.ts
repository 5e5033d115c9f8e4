import type { Role } from './roles.js';

/** The credential a request authenticated with (SPEC §3). */
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
}
