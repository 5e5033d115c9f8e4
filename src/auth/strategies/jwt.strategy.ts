import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createVerifier } from 'fast-jwt';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { ROLES } from '../../common/caller/roles.js';
import { UsersService } from '../../users/users.service.js';
import type { AccessTokenPayload, AuthUser } from '../../common/caller/auth-user.js';
import { TokenDenyList } from '../deny-list.js';
import { JwtKeys } from '../jwt-keys.js';

/**
 * How many verified access tokens the bearer verifier keeps (least recently used first out): one
 * per caller active within a token's lifetime (ACCESS_TOKEN_TTL) is enough for each to cost a
 * lookup; an entry is a SHA-256 of the token and its payload, well under a KiB.
 */
export const VERIFIED_TOKENS_CACHED = 5000;

/** The claims read by verification and {@link JwtStrategy.validate}, as decoded (not yet checked). */
type Claims = Partial<AccessTokenPayload> & { nbf?: unknown };

/**
 * passport-jwt strategy for `Authorization: Bearer <jwt>` (docs/authentication.md#the-access-token). The algorithm is pinned to
 * the configured one (HS256, or RS256 with a key pair), so `alg: none` and key confusion (HS256
 * signed with the public key) fail; the key is always the configured one (`jku`, `x5u`, `jwk`
 * headers are never followed). Signature, algorithm, `exp` and `nbf` are verified by a fast-jwt
 * verifier made once, at start-up, which keeps the tokens it verified ({@link VERIFIED_TOKENS_CACHED},
 * keyed by their SHA-256), so a token seen again costs a hash and a lookup instead of a decode and
 * an HMAC or RSA verification. Its time rules are jsonwebtoken's, checked on every request, cached
 * or not: expired once the current Unix second reaches `exp` (no clock tolerance), not yet valid
 * while `nbf` is after it; a cached verification therefore never outlives `exp`. The signature
 * must be in the canonical base64url form the service writes.
 *
 * {@link validate} further requires an explicit numeric `exp`, `typ: "access"`, an integer
 * `user_id`, a known `role`, a `jti` and a `fid`; the token must not be
 * denied (authority is current, docs/authentication.md#logging-out-and-the-deny-list: its `jti`, its login, or its user's not-before stamp
 * after a role or password change or a deletion — {@link TokenDenyList}, one store round trip,
 * on every request: the cache holds verifications, never verdicts)
 * and its user must exist (UsersService.exists: cached, so no database query per request).
 * An OAuth access token also carries `client_id` and `scope`: the caller is then limited
 * to those scopes, checked by ScopeGuard exactly as for an API key.
 *
 * AuthenticationGuard calls {@link authenticateBearer} directly, without passport's per-request
 * machinery; the strategy stays registered with passport as `jwt` and reaches the same verdicts
 * through {@link authenticate}, which replaces passport-jwt's (jsonwebtoken) verification.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly extractToken = ExtractJwt.fromAuthHeaderAsBearerToken();
  /** The fast-jwt verifier: the pinned algorithm, the configured key, no clock tolerance, verified tokens cached. */
  private readonly verifyToken: (token: string) => Claims;

  constructor(
    keys: JwtKeys,
    private readonly denyList: TokenDenyList,
    private readonly users: UsersService,
  ) {
    // passport-jwt's constructor requires an extractor and a key; its own verification is not used (see authenticate)
    super({ jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey: keys.verifyKey as unknown as Buffer, algorithms: [keys.algorithm] });
    this.verifyToken = createVerifier({
      // fast-jwt takes the key's bytes (HS256: the secret) or its PEM (RS256) and builds its key object once, here
      key: keys.algorithm === 'HS256' ? keys.verifyKey.export() : keys.verifyKey.export({ type: 'spki', format: 'pem' }).toString(),
      algorithms: [keys.algorithm],
      clockTolerance: 0,
      cache: VERIFIED_TOKENS_CACHED,
    });
  }

  /**
   * passport's entry point (passport-strategy: a strategy reimplements `authenticate`): the
   * verdict of {@link authenticateBearer} — `success` with the caller, `fail` (→ 401) when
   * refused, `error` when the check itself failed (503 from {@link validate}).
   */
  override authenticate(req: IncomingMessage, _options?: unknown): void {
    this.authenticateBearer(req).then(
      (user) => (user ? this.success(user) : this.fail(new Error('invalid or expired token'), 401)),
      (error: Error) => this.error(error),
    );
  }

  /**
   * The caller of a request with `Authorization: Bearer <jwt>`, or `false` (→ 401) when the
   * header holds no token, the token does not verify (malformed, signature, algorithm, `exp`,
   * `nbf`) or {@link validate} refuses it.
   * @throws 503 when the shared store or the database is unavailable (from {@link validate}).
   */
  async authenticateBearer(req: IncomingMessage): Promise<AuthUser | false> {
    const token = this.extractToken(req as never);
    if (!token) return false;
    let payload: Claims;
    try {
      payload = this.verifyToken(token);
    } catch {
      return false;
    }
    // jsonwebtoken's time rules, in whole seconds, on every request (a cached verification included)
    const now = Math.floor(Date.now() / 1000);
    if (typeof payload.exp !== 'number' || now >= payload.exp) return false;
    if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > now)) return false;
    if (!canonicalSignature(token)) return false;
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
    if (payload.totp_setup === true) user.totpSetup = true;
    if (payload.client_id !== undefined) {
      user.clientId = payload.client_id;
      user.scopes = (payload.scope as string).split(' ').filter(Boolean);
    }
    return user;
  }
}

/**
 * Whether the token's signature segment is the canonical base64url of its bytes (what the service
 * writes): base64url leaves the last character's low bits unused, and a decoder ignores them, so
 * up to 16 spellings of one signature would verify. jsonwebtoken compared HS256 signatures as
 * text; this keeps refusing the other spellings.
 */
function canonicalSignature(token: string): boolean {
  const signature = token.slice(token.lastIndexOf('.') + 1);
  return Buffer.from(signature, 'base64url').toString('base64url') === signature;
}
