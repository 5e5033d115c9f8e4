import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { unauthorized } from '../../common/errors/api-exception.js';
import { IS_PUBLIC } from '../decorators/auth.decorators.js';

/**
 * The global authentication guard (SPEC §3): every operation needs a valid bearer token unless it
 * is marked `@Public()`. Public-ness is looked up once per handler.
 * @throws 401 `unauthorized` with `WWW-Authenticate: Bearer realm="api"` (plus
 *   `error="invalid_token"` when a bearer token was sent but is malformed, invalid or expired).
 */
@Injectable()
export class JwtAuthGuard extends AuthGuard('jwt') {
  private readonly publicHandlers = new Map<Function, boolean>();

  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const handler = context.getHandler();
    let isPublic = this.publicHandlers.get(handler);
    if (isPublic === undefined) {
      isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, context.getClass()]) ?? false;
      this.publicHandlers.set(handler, isPublic);
    }
    if (isPublic) return true;
    return super.canActivate(context);
  }

  override handleRequest<TUser>(err: unknown, user: TUser | false, _info: unknown, context: ExecutionContext): TUser {
    if (user && !err) return user;
    const authorization = context.switchToHttp().getRequest<Request>().headers.authorization ?? '';
    // RFC 6750 §3.1: no error code when no bearer token was sent (no header, or another scheme such as Basic)
    if (!/^bearer\s+\S/i.test(authorization.trim())) throw unauthorized('authentication required');
    throw unauthorized('invalid or expired token', true);
  }
}
