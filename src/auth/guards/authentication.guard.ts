import { timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, HttpException, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { forbidden, unauthorized } from '../../common/errors/api-exception.js';
import type { AuthScheme, AuthUser } from '../../common/caller/auth-user.js';
import { IS_PUBLIC } from '../../common/caller/public.decorator.js';
import type { GuardedRoute, RouteGuard } from '../../common/guards/route-guards.js';
import { type HeaderSink, RateLimiter } from '../rate-limiter.js';
import { SESSION_COOKIE } from '../sessions.service.js';
import { JwtStrategy } from '../strategies/jwt.strategy.js';
import { ALLOWED_DURING_TOTP_SETUP } from '../decorators/auth.decorators.js';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The 403 of a login limited to enrolling (REQUIRE_ADMIN_TOTP) on any other operation. */
export const TOTP_SETUP_REQUIRED =
  'two-factor authentication is required for admins: enrol with POST /v1/totp-enrolments and POST /v1/totp-confirmations, then sign in again';

/** Which credential a request carries; the first present wins: Bearer, then X-API-Key, then the cookie (docs/authentication.md#overview). */
export function presentScheme(req: Request): AuthScheme | undefined {
  if (/^bearer\s/i.test(req.headers.authorization ?? '')) return 'bearer';
  if (req.headers['x-api-key'] !== undefined) return 'api_key';
  if ((req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE] !== undefined) return 'session';
  return undefined;
}

/**
 * A strategy's verdict: the user, or 401 when the credential is wrong. An error raised while
 * checking it (the shared store or the database unavailable → 503) is not the caller's fault and
 * passes through unchanged instead of posing as a bad credential.
 */
function verdict<T>(err: unknown, user: T | false, refusal: () => Error): T {
  if (err) throw err;
  if (user) return user;
  throw refusal();
}

class BearerGuard extends AuthGuard('jwt') {
  override handleRequest<T>(err: unknown, user: T | false): T {
    return verdict(err, user, () => unauthorized('invalid or expired token', true));
  }
}

class ApiKeyGuard extends AuthGuard('api-key') {
  override handleRequest<T>(err: unknown, user: T | false): T {
    return verdict(err, user, () => unauthorized('invalid, expired or revoked API key'));
  }
}

class SessionGuard extends AuthGuard('session') {
  override handleRequest<T>(err: unknown, user: T | false): T {
    return verdict(err, user, () => unauthorized('session expired or unknown; sign in again'));
  }
}

/**
 * The one authentication guard (docs/authentication.md#overview), global: every operation not marked `@Public()` needs a
 * credential, and the first one present decides (Bearer JWT, X-API-Key, `sid` cookie): a Bearer
 * token by JwtStrategy.authenticateBearer (its fast-jwt verifier directly: passport's per-request
 * machinery cost more than the verification), an API key and a session by their passport strategies. Then, for a session, unsafe methods need `X-CSRF-Token`
 * equal to the session's token. Scopes are checked later by ScopeGuard, after the rate limit, so
 * that refused calls of an API key count and carry the rate-limit headers too.
 * Per-handler metadata is resolved once and cached. A request refused with 401 is an anonymous
 * caller: it is counted in the `anonymous` rate-limit policy of its client address
 * (docs/limits.md#rates), so guessing credentials is limited like any public request.
 * @throws 401 `unauthorized` (+ `WWW-Authenticate`) when the credential is missing or invalid;
 *   429 `rate_limited` instead when that address is over its anonymous quota;
 *   403 `forbidden` for a missing/wrong CSRF token, and for a login limited to enrolling in two-factor
 *   authentication (REQUIRE_ADMIN_TOTP) on an operation not marked `@AllowedDuringTotpSetup()`.
 */
@Injectable()
export class AuthenticationGuard implements RouteGuard {
  private readonly publicHandlers = new Map<Function, boolean>();
  private readonly totpSetupHandlers = new Map<Function, boolean>();
  private readonly guards: Record<AuthScheme, CanActivate> = {
    bearer: new BearerGuard(),
    api_key: new ApiKeyGuard(),
    session: new SessionGuard(),
  };

  /**
   * `jwt`: the application's JwtStrategy (always there in the application, where AuthModule
   * provides it); without it — a guard built by hand — a Bearer token goes through the passport
   * strategy registered as `jwt`, with the same verdicts. `limiter`: counts refused requests
   * (absent in a guard built by hand: they are not counted).
   */
  constructor(
    private readonly reflector: Reflector,
    @Optional() private readonly jwt?: JwtStrategy,
    @Optional() private readonly limiter?: RateLimiter,
  ) {}

  /** Every operation not marked `@Public()`. */
  appliesTo({ handler, controller }: GuardedRoute): boolean {
    return !(this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, controller]) ?? false);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) return true;
    const req = context.switchToHttp().getRequest<Request & { user?: AuthUser }>();
    const scheme = presentScheme(req);
    try {
      if (!scheme) throw unauthorized('authentication required');
      if (scheme === 'bearer' && this.jwt)
        req.user = verdict(null, await this.jwt.authenticateBearer(req), () => unauthorized('invalid or expired token', true));
      else await this.guards[scheme].canActivate(context);
    } catch (error) {
      if (this.limiter && error instanceof HttpException && error.getStatus() === 401) {
        req.user = undefined;
        // 429 instead of the 401 when the address is over its quota; the 401 carries the headers otherwise
        await this.limiter.count('anonymous', req, context.switchToHttp().getResponse<HeaderSink>());
      }
      throw error;
    }
    const user = req.user as AuthUser;
    user.scheme = scheme;
    if (scheme === 'session' && UNSAFE_METHODS.has(req.method)) {
      const sent = req.headers['x-csrf-token'];
      const expected = Buffer.from(user.csrfToken ?? '');
      if (typeof sent !== 'string' || sent.length !== expected.length || !timingSafeEqual(Buffer.from(sent), expected)) {
        throw forbidden('X-CSRF-Token header missing or wrong (required for cookie-authenticated writes)');
      }
    }
    if (user.totpSetup && !this.allowedDuringTotpSetup(context)) throw forbidden(TOTP_SETUP_REQUIRED);
    return true;
  }

  /** Whether the operation is marked `@AllowedDuringTotpSetup()` (cached per handler). */
  private allowedDuringTotpSetup(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let allowed = this.totpSetupHandlers.get(handler);
    if (allowed === undefined) {
      allowed = this.reflector.getAllAndOverride<boolean>(ALLOWED_DURING_TOTP_SETUP, [handler, context.getClass()]) ?? false;
      this.totpSetupHandlers.set(handler, allowed);
    }
    return allowed;
  }

  private isPublic(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let isPublic = this.publicHandlers.get(handler);
    if (isPublic === undefined) {
      isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, context.getClass()]) ?? false;
      this.publicHandlers.set(handler, isPublic);
    }
    return isPublic;
  }
}
