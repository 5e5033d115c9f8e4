import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import { JwtService, type JwtVerifyOptions } from '@nestjs/jwt';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { ROLES } from '../../common/caller/roles.js';
import { UsersService } from '../../users/users.service.js';
import type { AccessTokenPayload, AuthUser } from '../../common/caller/auth-user.js';
import { TokenDenyList } from '../deny-list.js';
import { JwtKeys } from '../jwt-keys.js';

/**
 * passport-jwt strategy for `Authorization: Bearer <jwt>` (docs/authentication.md#the-access-token). The algorithm is pinned to
 * the configured one (HS256, or RS256 with a key pair), so `alg: none` and key confusion (HS256
 * signed with the public key) fail; the key is always the configured one (`jku`, `x5u`, `jwk`
 * headers are never followed); signature and `exp` are verified by jsonwebtoken. {@link validate}
 * further requires an explicit numeric `exp` (jsonwebtoken accepts a token without one),
 * `typ: "access"`, an integer `user_id`, a known `role`, a `jti` and a `fid`; the token must not be
 * denied (authority is current, docs/authentication.md#logging-out-and-the-deny-list: its `jti`, its login, or its user's not-before stamp
 * after a role or password change or a deletion — {@link TokenDenyList}, one store round trip)
 * and its user must exist (UsersService.exists: cached, so no database query per request).
 * An OAuth access token also carries `client_id` and `scope`: the caller is then limited
 * to those scopes, checked by ScopeGuard exactly as for an API key.
 *
 * AuthenticationGuard calls {@link authenticateBearer}, the same checks without passport's
 * per-request machinery; the passport strategy stays registered as `jwt` and behaves the same.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly extractToken = ExtractJwt.fromAuthHeaderAsBearerToken();
  private readonly jwt = new JwtService();
  /** What passport-jwt hands jsonwebtoken.verify: the pinned algorithm, the prebuilt key, `exp` checked with no tolerance. */
  private readonly verifyOptions: JwtVerifyOptions;

  constructor(
    keys: JwtKeys,
    private readonly denyList: TokenDenyList,
    private readonly users: UsersService,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // the KeyObject made once at start-up (passport-jwt types it as a string or Buffer; jsonwebtoken.verify takes a KeyObject)
      secretOrKey: keys.verifyKey as unknown as Buffer,
      algorithms: [keys.algorithm],
      ignoreExpiration: false,
      jsonWebTokenOptions: { clockTolerance: 0 },
    });
    this.verifyOptions = { ...keys.verifyOptions, ignoreExpiration: false, clockTolerance: 0 };
  }

  /**
   * The caller of a request with `Authorization: Bearer <jwt>`, or `false` (→ 401) when the
   * header holds no token, the token does not verify (signature, algorithm, `exp`) or
   * {@link validate} refuses it: what passport-jwt decides with this strategy, by the same
   * extractor, the same jsonwebtoken verification and the same options, run directly.
   * @throws 503 when the shared store or the database is unavailable (from {@link validate}).
   */
  async authenticateBearer(req: IncomingMessage): Promise<AuthUser | false> {
    const token = this.extractToken(req as never);
    if (!token) return false;
    let payload: Partial<AccessTokenPayload>;
    try {
      payload = this.jwt.verify<Partial<AccessTokenPayload>>(token, this.verifyOptions);
    } catch {
      return false;
    }
    return this.validate(payload);
  }

  /**
   * Returns the caller, or `false` (→ 401) when a claim is missing or wrong, the token is denied
   * or its user does not exist. @throws 503 when the shared store or the database is unavailable.
   */
  async validate(payload: Partial<AccessTokenPayload>): Promise<AuthUser | false> {
    if (typeof payload.exp !== 'number' || payload.typ !== 'access' || typeof payload.jti !== 'string' || typeof payload.fid !== 'string') return false;
    if (!Number.isSafeInteger(payload.user_id) || (payload.user_id as number) < 1) return false;
    if (!ROLES.includes(payload.role as (typeof ROLES)[number])) return false;
    if (payload.client_id !== undefined && (typeof payload.client_id !== 'string' || typeof payload.scope !== 'string')) return false;
    if (typeof payload.iat !== 'number') return false;
    const claims = { jti: payload.jti, user_id: payload.user_id as number, fid: payload.fid, iat: payload.iat, iat_ms: payload.iat_ms };
    // one shared-store round trip (jti, user not-before stamp, login) alongside the cached existence check
    const [denied, exists] = await Promise.all([this.denyList.isDenied(claims), this.users.exists(claims.user_id)]);
    if (denied || !exists) return false;
    const user: AuthUser = { id: payload.user_id as number, role: payload.role as AuthUser['role'], jti: payload.jti, exp: payload.exp, fid: payload.fid };
    if (payload.client_id !== undefined) {
      user.clientId = payload.client_id;
      user.scopes = (payload.scope as string).split(' ').filter(Boolean);
    }
    return user;
  }
}
