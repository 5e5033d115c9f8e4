import type { CanActivate, ExecutionContext, OnApplicationBootstrap, Type } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import { applicationRoutes, type RouteHandler } from '../routing/route-handlers.js';

/** A route as a guard sees it at start-up: its handler and its controller. */
export type GuardedRoute = RouteHandler;

/** A guard of the shared chain that says which routes need it; without `appliesTo` it guards every route. */
export interface RouteGuard extends CanActivate {
  /** Whether `route` needs this guard; asked once per route, at start-up, not per request. */
  appliesTo?(route: GuardedRoute): boolean;
}

/**
 * The global guards as one: for each route it runs, in order, only the guards of `guards` whose
 * {@link RouteGuard.appliesTo} takes the route — worked out for every route at start-up from its
 * metadata — so a public operation is not passed through authentication, an operation without
 * `@Roles()` not through the role check. The first guard that throws ends the chain with its error
 * (401, 403, 429, 503 as that guard documents); one that answers false ends it with Nest's 403,
 * exactly as separate global guards would.
 */
export class RouteGuards implements CanActivate, OnApplicationBootstrap {
  private readonly routes = new WeakMap<Function, readonly CanActivate[]>();

  /**
   * @param guards the guards, in the order they run.
   * @param discovery finds the routes whose chains are worked out at start-up (without it — a chain built by hand — on a route's first request).
   */
  constructor(
    private readonly guards: readonly RouteGuard[],
    private readonly discovery?: DiscoveryService,
  ) {}

  /** Each route's chain, worked out now rather than on its first request. */
  onApplicationBootstrap(): void {
    if (this.discovery) for (const { handler, controller } of applicationRoutes(this.discovery)) this.guardsOf(handler, controller);
  }

  /** The guards `handler` of `controller` runs, in order. */
  guardsOf(handler: Function, controller: Type): readonly CanActivate[] {
    let chain = this.routes.get(handler);
    if (chain === undefined) {
      const route: GuardedRoute = { handler, controller };
      chain = this.guards.filter((guard) => guard.appliesTo?.(route) ?? true);
      this.routes.set(handler, chain);
    }
    return chain;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    for (const guard of this.guardsOf(context.getHandler(), context.getClass())) {
      const answer = guard.canActivate(context);
      const allowed = typeof answer === 'boolean' ? answer : isObservable(answer) ? await lastValueFrom(answer) : await answer;
      if (!allowed) return false;
    }
    return true;
  }
}
