import { type ExecutionContext, Inject, Injectable, type OnApplicationBootstrap, Optional } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { forbidden } from '../../common/errors/api-exception.js';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { IS_PUBLIC } from '../../common/caller/public.decorator.js';
import type { GuardedRoute, RouteGuard } from '../../common/guards/route-guards.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../../common/resources/resource-registry.js';
import { REQUIRED_SCOPE, SCOPE_RESOURCE } from '../decorators/auth.decorators.js';

/**
 * Scope check for scoped credentials — API keys and OAuth access tokens (docs/authentication.md#roles-and-scopes: a
 * credential without the scope an operation needs → 403): an operation needs `@RequireScope(scope)`, or `<resource>:read` (GET, HEAD) /
 * `<resource>:write` from its controller's `@ScopedResource(resource)`; `@RequireScope(null)` or no
 * declaration means scoped credentials may not call it. Callers with their full rights (bearer,
 * session) pass. Runs after authentication and the rate limit; the scope is resolved once per handler.
 * At start-up, every scope the controllers name must be one of the application's (the registry's
 * declarations with `scopes: true`).
 * @throws 403 `forbidden` naming the missing scope.
 */
@Injectable()
export class ScopeGuard implements RouteGuard, OnApplicationBootstrap {
  private readonly scopes = new Map<Function, string | null>();

  constructor(
    private readonly reflector: Reflector,
    @Optional() @Inject(RESOURCE_REGISTRY) private readonly registry?: ResourceRegistry,
    @Optional() private readonly modules?: ModulesContainer,
  ) {}

  /**
   * Checks the scopes the controllers name: `@ScopedResource(name)` needs a declaration `name`
   * with scopes (its `:read` scope exists), `@RequireScope(scope)` one of the scopes.
   * @throws Error at start-up naming the controller and the undeclared scope.
   */
  onApplicationBootstrap(): void {
    if (!this.registry || !this.modules) return;
    for (const module of this.modules.values()) {
      for (const { metatype } of module.controllers.values()) {
        const controller = metatype as Function;
        const resource = this.reflector.get<string | undefined>(SCOPE_RESOURCE, controller);
        const named = resource ? [`${resource}:read`] : [];
        for (const key of Object.getOwnPropertyNames(controller.prototype)) {
          const method = key === 'constructor' ? undefined : Object.getOwnPropertyDescriptor(controller.prototype, key)?.value;
          const scope = typeof method === 'function' ? this.reflector.get<string | null | undefined>(REQUIRED_SCOPE, method) : undefined;
          if (scope) named.push(scope);
        }
        const undeclared = named.find((scope) => !this.registry!.scopes.includes(scope));
        if (undeclared) throw new Error(`${controller.name}: scope ${undeclared} is not declared (a declaration with scopes: true, src/resources.ts)`);
      }
    }
  }

  /** Every operation not marked `@Public()` (a public one has no authenticated caller to limit). */
  appliesTo({ handler, controller }: GuardedRoute): boolean {
    return !(this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, controller]) ?? false);
  }

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
