import type { Role } from '../users/user.entity.js';

/** The authenticated caller, as guards put it on `req.user`. */
export interface AuthUser {
  id: number;
  role: Role;
  /** The access token's `jti` and `exp` (Unix seconds), when the caller used a JWT. */
  jti?: string;
  exp?: number;
  /** The login (refresh-token family) the access token belongs to. */
  fid?: string;
}

/** The access-token payload of SPEC §3 (`iat`, `exp`, `jti` are added when signing). */
export interface AccessTokenPayload {
  user_id: number;
  role: Role;
  /** Token type: always `access`; a token of another type is never an access token. */
  typ: 'access';
  /** The login it was issued for (its refresh-token family), revoked together at logout. */
  fid: string;
  iat: number;
  exp: number;
  jti: string;
}
