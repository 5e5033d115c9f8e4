import type { Role } from '../common/caller/roles.js';

/** The access-token payload (docs/authentication.md#the-access-token; `iat`, `exp`, `jti` are added when signing). */
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
}
