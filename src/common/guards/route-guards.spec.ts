import { describe, expect, it } from '@jest/globals';
import { type CanActivate, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { of } from 'rxjs';
import { fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { AuthenticationGuard } from '../../auth/guards/authentication.guard.js';
import { RateLimitGuard } from '../../auth/guards/rate-limit.guard.js';
import { RolesGuard } from '../../auth/guards/roles.guard.js';
import { ScopeGuard } from '../../auth/guards/scope.guard.js';
import { REQUIRED_ROLES } from '../../auth/decorators/auth.decorators.js';
import type { RateLimiter } from '../../auth/rate-limiter.js';
import { SKIP_RATE_LIMIT } from '../../auth/rate-limits.js';
import { IS_PUBLIC } from '../caller/public.decorator.js';
import { ApiException } from '../errors/api-exception.js';
import { type GuardedRoute, type RouteGuard, RouteGuards } from './route-guards.js';

/** A guard recording its name in `calls`, answering `answer` (or throwing it when it is an Error), on the routes `applies` takes. */
function recording(name: string, calls: string[], answer: unknown = true, applies?: (route: GuardedRoute) => boolean): RouteGuard {
  return {
    canActivate: () => {
      calls.push(name);
      if (answer instanceof Error) throw answer;
      return answer as boolean;
    },
    ...(applies ? { appliesTo: applies } : {}),
  };
}

class Sample {
  open() {}
  @SetMetadata('needs', 'b')
  marked() {}
}

const context = (handler: 'open' | 'marked'): ExecutionContext => httpContext(fakeRequest('GET', '/v1/sample'), undefined, Sample, handler);

describe('RouteGuards', () => {
  it('runs, in order, only the guards whose appliesTo takes the route', async () => {
    const calls: string[] = [];
    const guards = new RouteGuards([
      recording('a', calls),
      recording('b', calls, true, ({ handler }) => Reflect.getMetadata('needs', handler) === 'b'),
      recording('c', calls),
    ]);
    await expect(guards.canActivate(context('open'))).resolves.toBe(true);
    expect(calls).toEqual(['a', 'c']);
    calls.length = 0;
    await expect(guards.canActivate(context('marked'))).resolves.toBe(true);
    expect(calls).toEqual(['a', 'b', 'c']);
  });

  it('asks appliesTo once per route, not per request', async () => {
    let asked = 0;
    const guards = new RouteGuards([{ canActivate: () => true, appliesTo: () => (asked += 1) > 0 }]);
    for (let i = 0; i < 3; i += 1) await guards.canActivate(context('open'));
    expect(asked).toBe(1);
  });

  it('stops at the first guard that answers false (Nest then answers 403) or throws (its error reaches the caller)', async () => {
    const calls: string[] = [];
    await expect(new RouteGuards([recording('a', calls, false), recording('b', calls)]).canActivate(context('open'))).resolves.toBe(false);
    expect(calls).toEqual(['a']);
    calls.length = 0;
    const refused = new ApiException(429, 'slow down');
    await expect(new RouteGuards([recording('a', calls, refused), recording('b', calls)]).canActivate(context('open'))).rejects.toBe(refused);
    expect(calls).toEqual(['a']);
  });

  it('waits for a guard answering with a promise or an observable', async () => {
    const late = (allowed: boolean): CanActivate => ({ canActivate: async () => allowed });
    const stream = (allowed: boolean): CanActivate => ({ canActivate: () => of(allowed) });
    await expect(new RouteGuards([late(true), stream(true)]).canActivate(context('open'))).resolves.toBe(true);
    await expect(new RouteGuards([late(true), stream(false)]).canActivate(context('open'))).resolves.toBe(false);
    await expect(new RouteGuards([late(false), stream(true)]).canActivate(context('open'))).resolves.toBe(false);
  });
});

@SetMetadata(IS_PUBLIC, true)
class PublicController {
  probe() {}
}

class PrivateController {
  read() {}
  @SetMetadata(REQUIRED_ROLES, ['admin'])
  administer() {}
  @SetMetadata(SKIP_RATE_LIMIT, true)
  metrics() {}
  @SetMetadata(IS_PUBLIC, true)
  signIn() {}
}

describe('the service’s guards on RouteGuards', () => {
  const reflector = new Reflector();
  const guards = new RouteGuards([
    new AuthenticationGuard(reflector),
    new RateLimitGuard({} as RateLimiter, reflector),
    new ScopeGuard(reflector),
    new RolesGuard(reflector),
  ]);
  const names = (controller: Function, handler: string) =>
    guards.guardsOf((controller.prototype as Record<string, Function>)[handler], controller as never).map((guard) => guard.constructor.name);

  it('attaches authentication and the scope check to every operation not marked @Public(), on the handler or its controller', () => {
    expect(names(PrivateController, 'read')).toEqual(['AuthenticationGuard', 'RateLimitGuard', 'ScopeGuard']);
    expect(names(PrivateController, 'signIn')).toEqual(['RateLimitGuard']);
    expect(names(PublicController, 'probe')).toEqual(['RateLimitGuard']);
  });

  it('attaches the role check only to operations marked @Roles() and the rate limit to all but @SkipRateLimit()', () => {
    expect(names(PrivateController, 'administer')).toEqual(['AuthenticationGuard', 'RateLimitGuard', 'ScopeGuard', 'RolesGuard']);
    expect(names(PrivateController, 'metrics')).toEqual(['AuthenticationGuard', 'ScopeGuard']);
  });
});
