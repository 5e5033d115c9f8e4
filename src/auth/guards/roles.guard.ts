import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { forbidden } from '../../common/errors/api-exception.js';
import type { Role } from '../../common/caller/roles.js';
import type { AuthUser } from '../../common/caller/auth-user.js';
import type { GuardedRoute, RouteGuard } from '../../common/guards/route-guards.js';
import { REQUIRED_ROLES } from '../decorators/auth.decorators.js';

/**
 * Global role guard (docs/authentication.md#roles-and-scopes): an operation marked `@Roles(...)` needs the caller to have one of
 * those roles. Runs after authentication.
 * @throws 403 `forbidden` naming the roles needed.
 */
@Injectable()
export class RolesGuard implements RouteGuard {
  private readonly cache = new Map<Function, Role[] | null>();

  constructor(private readonly reflector: Reflector) {}

  /** The operations marked `@Roles(...)` (on the handler or its controller). */
  appliesTo({ handler, controller }: GuardedRoute): boolean {
    return this.reflector.getAllAndOverride<Role[]>(REQUIRED_ROLES, [handler, controller]) !== undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let roles = this.cache.get(handler);
    if (roles === undefined) {
      roles = this.reflector.getAllAndOverride<Role[]>(REQUIRED_ROLES, [handler, context.getClass()]) ?? null;
      this.cache.set(handler, roles);
    }
    if (!roles) return true;
    const user = context.switchToHttp().getRequest<{ user?: AuthUser }>().user;
    if (user && roles.includes(user.role)) return true;
    throw forbidden(`this operation needs the ${roles.join(' or ')} role`);
  }
}
