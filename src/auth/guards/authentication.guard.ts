import { timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { forbidden, unauthorized } from '../../common/errors/api-exception.js';
import type { AuthScheme, AuthUser } from '../auth-user.js';
import { IS_PUBLIC, REQUIRED_SCOPE, SCOPE_RESOURCE } from '../decorators/auth.decorators.js';
import { SESSION_COOKIE } from '../sessions.service.js';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Which credential a request carries; the first present wins: Bearer, then X-API-Key, then the cookie (SPEC §3). */
export function presentScheme(req: Request): AuthScheme | undefined {
  if (/^bearer\s/i.test(req.headers.authorization ?? '')) return 'bearer';
  if (req.headers['x-api-key'] !== undefined) return 'api_key';
  if ((req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE] !== undefined) return 'session';
  return undefined;
}

class BearerGuard extends AuthGuard('jwt') {
  override handleRequest<T>(err: unknown, user: T | false): T {
    if (user && !err) return user;
    throw unauthorized('invalid or expired token', true);
  }
}

class ApiKeyGuard extends AuthGuard('api-key') {
  override handleRequest<T>(err: unknown, user: T | false): T {
    if (user && !err) return user;
    throw unauthorized('invalid, expired or revoked API key');
  }
}

class SessionGuard extends AuthGuard('session') {
  override handleRequest<T>(err: unknown, user: T | false): T {
    if (user && !err) return user;
    throw unauthorized('session expired or unknown; sign in again');
  }
}

interface OperationAuth {
  isPublic: boolean;
  /** The scope a scoped credential needs; null when scoped credentials may not call it. */
  scope: string | null;
}

/**
 * The one authentication guard (SPEC §3), global: every operation not marked `@Public()` needs a
 * credential, and the first one present decides (Bearer JWT, X-API-Key, `sid` cookie), each
 * verified by its passport strategy. Then, for a session, unsafe methods need `X-CSRF-Token`
 * equal to the session's token; for a scoped credential (API key), the operation's scope.
 * Per-handler metadata is resolved once and cached.
 * @throws 401 `unauthorized` (+ `WWW-Authenticate`) when the credential is missing or invalid;
 *   403 `forbidden` for a missing/wrong CSRF token or a missing scope (naming it).
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  private readonly operations = new Map<Function, OperationAuth>();
  private readonly guards: Record<AuthScheme, CanActivate> = {
    bearer: new BearerGuard(),
    api_key: new ApiKeyGuard(),
    session: new SessionGuard(),
  };

  constructor(private readonly reflector: Reflector) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const operation = this.operation(context);
    if (operation.isPublic) return true;
    const req = context.switchToHttp().getRequest<Request & { user?: AuthUser }>();
    const scheme = presentScheme(req);
    if (!scheme) throw unauthorized('authentication required');
    await this.guards[scheme].canActivate(context);
    const user = req.user as AuthUser;
    user.scheme = scheme;
    if (scheme === 'session' && UNSAFE_METHODS.has(req.method)) {
      const sent = req.headers['x-csrf-token'];
      const expected = Buffer.from(user.csrfToken ?? '');
      if (typeof sent !== 'string' || sent.length !== expected.length || !timingSafeEqual(Buffer.from(sent), expected)) {
        throw forbidden('X-CSRF-Token header missing or wrong (required for cookie-authenticated writes)');
      }
    }
    if (user.scopes) {
      if (operation.scope === null) throw forbidden(`${scheme === 'api_key' ? 'API keys' : 'scoped tokens'} cannot use this operation`);
      if (!user.scopes.includes(operation.scope)) throw forbidden(`missing scope ${operation.scope}`);
    }
    return true;
  }

  private operation(context: ExecutionContext): OperationAuth {
    const handler = context.getHandler();
    let operation = this.operations.get(handler);
    if (!operation) {
      const targets = [handler, context.getClass()];
      const explicit = this.reflector.getAllAndOverride<string | null | undefined>(REQUIRED_SCOPE, targets);
      const resource = this.reflector.getAllAndOverride<string | undefined>(SCOPE_RESOURCE, targets);
      const method = context.switchToHttp().getRequest<Request>().method;
      const derived = resource ? `${resource}:${method === 'GET' || method === 'HEAD' ? 'read' : 'write'}` : null;
      operation = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ?? false,
        scope: explicit === undefined ? derived : explicit,
      };
      this.operations.set(handler, operation);
    }
    return operation;
  }
}
