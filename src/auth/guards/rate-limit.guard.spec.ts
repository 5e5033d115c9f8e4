import { describe, expect, it } from '@jest/globals';
import { Reflector } from '@nestjs/core';
import type { ConfigService } from '@nestjs/config';
import { FakeResponse, fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { ApiException } from '../../common/errors/api-exception.js';
import type { Env } from '../../config/env.validation.js';
import { MemoryStore } from '../../store/memory-store.js';
import { SharedStore } from '../../store/shared-store.js';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { RateLimiter } from '../rate-limiter.js';
import { RateLimit, setsPassword, SkipRateLimit } from '../rate-limits.js';
import { AuthenticationGuard } from './authentication.guard.js';
import { RateLimitGuard } from './rate-limit.guard.js';

class UsersController {
  list() {}
  @RateLimit('registration')
  register() {}
  @RateLimit('password_change', setsPassword)
  update() {}
}

@SkipRateLimit()
class HealthController {
  live() {}
}

const QUOTAS = {
  RATE_LIMIT_PER_MINUTE: 3,
  RATE_LIMIT_USER_PER_MINUTE: 4,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 5,
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: 2,
  RATE_LIMIT_SIGN_INS_PER_MINUTE: 2,
  RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: 1,
};

/** A guard over `store` with {@link QUOTAS}. */
function guard(store: SharedStore = new MemoryStore()): RateLimitGuard {
  const config = { get: (key: keyof typeof QUOTAS) => QUOTAS[key] } as unknown as ConfigService<Env, true>;
  return new RateLimitGuard(new RateLimiter(store, config), new Reflector());
}

/** One request: the guard's verdict (or its ApiException) and the response headers. */
async function call(limiter: RateLimitGuard, options: { user?: AuthUser; ip?: string; body?: unknown; handler?: string; controller?: new () => object } = {}) {
  const res = new FakeResponse();
  const req = { ...fakeRequest('POST', '/v1/users', { user: options.user, body: options.body }), ip: options.ip ?? '203.0.113.7' };
  const outcome = await limiter.canActivate(httpContext(req, res, (options.controller ?? UsersController) as never, options.handler ?? 'list')).then(
    (allowed) => allowed,
    (error: unknown) => error,
  );
  return { outcome, headers: res.headers };
}

const bearer = (id: number): AuthUser => ({ id, role: 'user', scheme: 'bearer' });

describe('RateLimitGuard and RateLimiter (docs/limits.md#rates)', () => {
  it('counts anonymous requests per client address, with draft-10 and earlier-draft headers', async () => {
    const limiter = guard();
    const first = await call(limiter);
    expect(first.outcome).toBe(true);
    expect(first.headers).toMatchObject({
      'ratelimit-policy': '"anonymous";q=5;w=60',
      'ratelimit-limit': '5',
      'ratelimit-remaining': '4',
    });
    expect(first.headers.ratelimit).toMatch(/^"anonymous";r=4;t=(60|59)$/);
    expect(first.headers['ratelimit-reset']).toMatch(/^(60|59)$/);
    for (let i = 0; i < 4; i++) expect((await call(limiter)).outcome).toBe(true);
    const over = await call(limiter);
    expect(over.outcome).toBeInstanceOf(ApiException);
    const error = over.outcome as ApiException;
    expect([error.getStatus(), error.code]).toEqual([429, 'rate_limited']);
    expect(error.message).toMatch(/^rate limit of 5 requests per minute from this client address exceeded; retry in \d+ s$/);
    expect(Number(error.headers?.['Retry-After'])).toBeGreaterThanOrEqual(59);
    expect(over.headers).toMatchObject({ 'ratelimit-remaining': '0', 'ratelimit-limit': '5' });
    expect(over.headers.ratelimit).toBe(`"anonymous";r=0;t=${error.headers?.['Retry-After']}`);
    // another address has its own budget
    expect((await call(limiter, { ip: '198.51.100.1' })).outcome).toBe(true);
  });

  it('counts authenticated requests per user whatever the credential, and API keys per key', async () => {
    const limiter = guard();
    const schemes: AuthUser[] = [bearer(1), { id: 1, role: 'user', scheme: 'session' }, bearer(1), { id: 1, role: 'user', scheme: 'bearer', clientId: 'oc_x' }];
    for (const user of schemes) expect((await call(limiter, { user })).headers['ratelimit-policy']).toBe('"user";q=4;w=60');
    expect((await call(limiter, { user: bearer(1) })).outcome).toBeInstanceOf(ApiException);
    expect((await call(limiter, { user: bearer(2) })).outcome).toBe(true);
    const key = (apiKeyId: number): AuthUser => ({ id: 1, role: 'user', scheme: 'api_key', apiKeyId });
    for (let i = 0; i < 3; i++) expect((await call(limiter, { user: key(7) })).headers.ratelimit).toMatch(new RegExp(`^"api_key";r=${2 - i};t=\\d+$`));
    expect((await call(limiter, { user: key(7) })).outcome).toBeInstanceOf(ApiException);
    expect((await call(limiter, { user: key(8) })).outcome).toBe(true);
  });

  it('puts costly operations in their own policy: registration per address, password change per user only with a password', async () => {
    const limiter = guard();
    expect((await call(limiter, { handler: 'register' })).headers['ratelimit-policy']).toBe('"registration";q=2;w=3600');
    expect((await call(limiter, { handler: 'register' })).outcome).toBe(true);
    const over = await call(limiter, { handler: 'register' });
    expect((over.outcome as ApiException).message).toMatch(/^rate limit of 2 requests per hour of registrations from this client address exceeded/);
    expect(Number((over.outcome as ApiException).headers?.['Retry-After'])).toBeGreaterThan(3500);
    // the general anonymous budget of that address is untouched
    expect((await call(limiter)).headers['ratelimit-remaining']).toBe('4');

    expect((await call(limiter, { user: bearer(3), handler: 'update', body: { password: 'a new password' } })).headers['ratelimit-policy']).toBe(
      '"password_change";q=1;w=3600',
    );
    expect((await call(limiter, { user: bearer(3), handler: 'update', body: { password: 'another one' } })).outcome).toBeInstanceOf(ApiException);
    // an update without a password counts as an ordinary request of the user
    const plain = await call(limiter, { user: bearer(3), handler: 'update', body: { name: 'N' } });
    expect([plain.outcome, plain.headers['ratelimit-policy']]).toEqual([true, '"user";q=4;w=60']);
  });

  it('skips operations marked SkipRateLimit: no count, no headers', async () => {
    const limiter = guard();
    for (let i = 0; i < 10; i++) {
      const { outcome, headers } = await call(limiter, { controller: HealthController, handler: 'live' });
      expect([outcome, headers]).toEqual([true, {}]);
    }
  });

  it('fails open when the store does not answer: passes, reporting the full quota', async () => {
    const broken = new MemoryStore();
    broken.hit = () => Promise.reject(new ApiException(503, 'the shared state store (Redis) is unavailable; try again later'));
    const limiter = guard(broken);
    for (let i = 0; i < 8; i++) {
      const { outcome, headers } = await call(limiter);
      expect(outcome).toBe(true);
      expect(headers).toMatchObject({ 'ratelimit-remaining': '5', ratelimit: '"anonymous";r=5;t=60' });
    }
  });

  it('lets exactly the quota through when requests race (one atomic hit each)', async () => {
    const limiter = guard();
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => call(limiter, { user: bearer(9) })));
    expect(outcomes.filter((o) => o.outcome === true)).toHaveLength(4);
  });

  it('counts a request refused with 401 as anonymous: 401 with the headers, then 429 over the quota', async () => {
    const config = { get: (key: keyof typeof QUOTAS) => QUOTAS[key] } as unknown as ConfigService<Env, true>;
    const authentication = new AuthenticationGuard(new Reflector(), undefined, new RateLimiter(new MemoryStore(), config));
    const attempt = async () => {
      const res = new FakeResponse();
      const req = { ...fakeRequest('GET', '/v1/users'), ip: '192.0.2.9' };
      const error = await authentication.canActivate(httpContext(req, res, UsersController as never, 'list')).then(
        () => undefined,
        (thrown: unknown) => thrown as ApiException,
      );
      return { status: error?.getStatus(), headers: res.headers };
    };
    for (let i = 0; i < 5; i++) {
      const { status, headers } = await attempt();
      expect(status).toBe(401);
      expect(headers['ratelimit']).toMatch(new RegExp(`^"anonymous";r=${4 - i};t=\\d+$`));
    }
    expect((await attempt()).status).toBe(429);
  });
});
