import { afterEach, describe, expect, it } from '@jest/globals';
import { Reflector } from '@nestjs/core';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { FakeResponse, fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { ApiException } from '../../common/errors/api-exception.js';
import type { AuthUser } from '../auth-user.js';
import { ApiKeyThrottlerGuard } from './api-key-throttler.guard.js';

class TodosController {
  list() {}
  create() {}
}

describe('ApiKeyThrottlerGuard (SPEC §7: RATE_LIMIT_PER_MINUTE per API key)', () => {
  const storages: ThrottlerStorageService[] = [];
  afterEach(() => storages.splice(0).forEach((storage) => storage.onApplicationShutdown()));

  /** A guard allowing `limit` requests a minute per key, on an in-memory store, initialised as Nest would. */
  async function guard(limit: number): Promise<ApiKeyThrottlerGuard> {
    const storage = new ThrottlerStorageService();
    storages.push(storage);
    const throttler = new ApiKeyThrottlerGuard({ throttlers: [{ name: 'default', ttl: 60_000, limit, blockDuration: 0 }] }, storage, new Reflector());
    await throttler.onModuleInit();
    return throttler;
  }

  /** One request of `user` to `handler`: the guard's verdict (or its ApiException) and the response headers. */
  async function call(throttler: ApiKeyThrottlerGuard, user: AuthUser | undefined, handler = 'list') {
    const res = new FakeResponse();
    const outcome = await throttler.canActivate(httpContext(fakeRequest('GET', '/v1/todos', { user }), res, TodosController, handler)).then(
      (allowed) => allowed,
      (error: unknown) => error,
    );
    return { outcome, headers: res.headers };
  }

  const key = (apiKeyId: number): AuthUser => ({ id: 1, role: 'user', scheme: 'api_key', scopes: ['todos:read'], apiKeyId });

  it('counts each API-key request and says so in RateLimit-* headers', async () => {
    const throttler = await guard(3);
    const first = await call(throttler, key(1));
    expect(first.outcome).toBe(true);
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '2' });
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect((await call(throttler, key(1))).headers['ratelimit-remaining']).toBe('1');
  });

  it('answers 429 rate_limited with Retry-After over the limit, with the headers at 0 remaining', async () => {
    const throttler = await guard(2);
    await call(throttler, key(1));
    await call(throttler, key(1));
    const over = await call(throttler, key(1));
    expect(over.outcome).toBeInstanceOf(ApiException);
    const error = over.outcome as ApiException;
    expect([error.getStatus(), error.code]).toEqual([429, 'rate_limited']);
    expect(error.message).toBe('rate limit of 2 requests per minute for this API key exceeded');
    expect(Number(error.headers?.['Retry-After'])).toBeGreaterThan(0);
    expect(over.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '0' });
  });

  it('keeps one budget per key across operations, and separate budgets for separate keys', async () => {
    const throttler = await guard(1);
    expect((await call(throttler, key(1), 'list')).outcome).toBe(true);
    expect((await call(throttler, key(1), 'create')).outcome).toBeInstanceOf(ApiException);
    expect((await call(throttler, key(2), 'create')).outcome).toBe(true);
  });

  it('leaves bearer, session and unauthenticated requests alone: no count, no headers', async () => {
    const throttler = await guard(1);
    for (const user of [{ id: 1, role: 'user', scheme: 'bearer' }, { id: 1, role: 'user', scheme: 'session' }, undefined] as (AuthUser | undefined)[]) {
      for (let i = 0; i < 3; i++) {
        const { outcome, headers } = await call(throttler, user);
        expect(outcome).toBe(true);
        expect(headers).toEqual({});
      }
    }
  });
});
