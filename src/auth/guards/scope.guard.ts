import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { forbidden } from '../../common/errors/api-exception.js';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { REQUIRED_SCOPE, SCOPE_RESOURCE } from '../decorators/auth.decorators.js';

/**
 * Scope check for scoped credentials — API keys and OAuth access tokens (docs/authentication.md#roles-and-scopes: a
 * credential without the scope an operation needs → 403): an operation needs `@RequireScope(scope)`, or `<resource>:read` (GET, HEAD) /
 * `<resource>:write` from its controller's `@ScopedResource(resource)`; `@RequireScope(null)` or no
 * declaration means scoped credentials may not call it. Callers with their full rights (bearer,
 * session) pass. Runs after authentication and the rate limit; the scope is resolved once per handler.
 * @throws 403 `forbidden` naming the missing scope.
 */
@Injectable()
export class ScopeGuard implements CanActivate {
  private readonly scopes = new Map<Function, string | null>();

  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request & { user?: AuthUser }>();
    const user = req.user;
    if (!user?.scopes) return true;
    const scope = this.requiredScope(context, req.method);
    if (scope === null) throw forbidden(`${user.scheme === 'api_key' ? 'API keys' : 'OAuth access tokens'} cannot use this operation`);
    if (!user.scopes.includes(scope)) throw forbidden(`missing scope ${scope}`);
    return true;
  }

  private requiredScope(context: ExecutionContext, method: string): string | null {
    const handler = context.getHandler();
    let scope = this.scopes.get(handler);
    if (scope === undefined) {
      const targets = [handler, context.getClass()];
      const explicit = this.reflector.getAllAndOverride<string | null | undefined>(REQUIRED_SCOPE, targets);
      const resource = this.reflector.getAllAndOverride<string | undefined>(SCOPE_RESOURCE, targets);
      scope = explicit !== undefined ? explicit : resource ? `${resource}:${method === 'GET' || method === 'HEAD' ? 'read' : 'write'}` : null;
      this.scopes.set(handler, scope);
    }
    return scope;
  }
}
