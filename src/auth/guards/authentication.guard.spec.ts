import { beforeAll, describe, expect, it } from '@jest/globals';
import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import passport from 'passport';
import { Strategy as CustomStrategy } from 'passport-custom';
import { type FakeRequest, fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { ApiException } from '../../common/errors/api-exception.js';
import type { AuthUser } from '../../common/caller/auth-user.js';
import { IS_PUBLIC } from '../../common/caller/public.decorator.js';
import { AuthenticationGuard, presentScheme } from './authentication.guard.js';

/** What the strategies raise for a credential marked `down`: the shared store or database unavailable. */
const STORE_DOWN = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

/**
 * Stand-ins for the passport strategies of src/auth/strategies, under the names the guard asks
 * for: `good` is a valid credential, `down` a check that fails for want of a dependency, anything
 * else an invalid credential. The guard's own decisions (which credential, 401 vs 403, CSRF, the
 * passing through of dependency errors) are what is tested, not token verification.
 */
function fakeStrategy(read: (req: FakeRequest) => string | undefined, user: AuthUser) {
  return new CustomStrategy((req, done) => {
    const credential = read(req as unknown as FakeRequest);
    if (credential === 'down') return done(STORE_DOWN);
    done(null, credential === 'good' ? { ...user } : false);
  });
}

beforeAll(() => {
  passport.use(
    'jwt',
    fakeStrategy((req) => req.headers.authorization?.replace(/^bearer\s+/i, ''), { id: 1, role: 'user' }),
  );
  passport.use(
    'api-key',
    fakeStrategy((req) => req.headers['x-api-key'], { id: 2, role: 'user', scopes: ['todos:read'], apiKeyId: 7 }),
  );
  passport.use(
    'session',
    fakeStrategy((req) => req.cookies.sid, { id: 3, role: 'admin', csrfToken: 'csrf-token-of-the-session' }),
  );
});

class TodosController {
  list() {}
  @SetMetadata(IS_PUBLIC, true)
  open() {}
}

@SetMetadata(IS_PUBLIC, true)
class PublicController {
  anything() {}
}

/** Runs the guard on `req` for `handler`; resolves to the request (with `user`) or rejects with the guard's error. */
async function authenticate(req: FakeRequest, controller: Function = TodosController, handler = 'list'): Promise<FakeRequest> {
  const allowed = await new AuthenticationGuard(new Reflector()).canActivate(httpContext(req, undefined, controller as never, handler));
  expect(allowed).toBe(true);
  return req;
}

/** The ApiException the guard rejects with. */
async function refusal(req: FakeRequest, controller?: Function, handler?: string): Promise<ApiException> {
  const error = await authenticate(req, controller, handler).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiException);
  return error as ApiException;
}

const get = (headers: Record<string, string> = {}, cookies: Record<string, string> = {}) => fakeRequest('GET', '/v1/todos', { headers, cookies });
const post = (headers: Record<string, string> = {}, cookies: Record<string, string> = {}) => fakeRequest('POST', '/v1/todos', { headers, cookies });

describe('AuthenticationGuard (docs/authentication.md#overview)', () => {
  it('lets a public operation (or a public controller) through without a credential and without a user', async () => {
    expect((await authenticate(get(), TodosController, 'open')).user).toBeUndefined();
    expect((await authenticate(post(), PublicController, 'anything')).user).toBeUndefined();
  });

  it('answers 401 with WWW-Authenticate when no credential is sent', async () => {
    const error = await refusal(get());
    expect(error.getStatus()).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(error.message).toBe('authentication required');
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="api"' });
  });

  it('answers 401 naming the credential when it is invalid; a bad token also gets error="invalid_token"', async () => {
    const token = await refusal(get({ authorization: 'Bearer forged' }));
    expect([token.getStatus(), token.message]).toEqual([401, 'invalid or expired token']);
    expect(token.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="api", error="invalid_token"' });
    const key = await refusal(get({ 'x-api-key': 'revoked' }));
    expect([key.getStatus(), key.message]).toEqual([401, 'invalid, expired or revoked API key']);
    const session = await refusal(get({}, { sid: 'expired' }));
    expect([session.getStatus(), session.message]).toEqual([401, 'session expired or unknown; sign in again']);
  });

  it('puts the caller on req.user with the scheme it authenticated with', async () => {
    expect((await authenticate(get({ authorization: 'bearer good' }))).user).toEqual({ id: 1, role: 'user', scheme: 'bearer' });
    expect((await authenticate(get({ 'x-api-key': 'good' }))).user).toMatchObject({ id: 2, scheme: 'api_key', scopes: ['todos:read'], apiKeyId: 7 });
    expect((await authenticate(get({}, { sid: 'good' }))).user).toMatchObject({ id: 3, scheme: 'session' });
  });

  it('lets the first credential present decide: Bearer, then X-API-Key, then the cookie', async () => {
    expect(presentScheme(get({ authorization: 'Bearer x', 'x-api-key': 'y' }, { sid: 'z' }) as never)).toBe('bearer');
    expect(presentScheme(get({ 'x-api-key': 'y' }, { sid: 'z' }) as never)).toBe('api_key');
    expect(presentScheme(get({ authorization: 'Basic abc' }, { sid: 'z' }) as never)).toBe('session');
    // a bad bearer token is not rescued by a good key or session behind it
    expect((await refusal(get({ authorization: 'Bearer forged', 'x-api-key': 'good' }, { sid: 'good' }))).message).toBe('invalid or expired token');
    expect((await authenticate(get({ 'x-api-key': 'good' }, { sid: 'expired' }))).user?.scheme).toBe('api_key');
  });

  it('needs X-CSRF-Token equal to the session token for cookie-authenticated writes (403), not for reads', async () => {
    const missing = await refusal(post({}, { sid: 'good' }));
    expect([missing.getStatus(), missing.code]).toEqual([403, 'forbidden']);
    expect(missing.message).toMatch(/X-CSRF-Token/);
    expect((await refusal(post({ 'x-csrf-token': 'csrf-token-of-the-sessioN' }, { sid: 'good' }))).getStatus()).toBe(403);
    expect((await refusal(post({ 'x-csrf-token': 'short' }, { sid: 'good' }))).getStatus()).toBe(403);
    expect((await authenticate(post({ 'x-csrf-token': 'csrf-token-of-the-session' }, { sid: 'good' }))).user?.id).toBe(3);
    expect((await authenticate(get({}, { sid: 'good' }))).user?.id).toBe(3);
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      expect((await refusal(fakeRequest(method, '/v1/todos/1', { cookies: { sid: 'good' } }))).getStatus()).toBe(403);
    }
    // a bearer write needs no CSRF token
    expect((await authenticate(post({ authorization: 'Bearer good' }))).user?.id).toBe(1);
  });

  it('passes an unavailable dependency through unchanged instead of posing as a bad credential (→ 503, not 401)', async () => {
    for (const req of [get({ authorization: 'Bearer down' }), get({ 'x-api-key': 'down' }), get({}, { sid: 'down' })]) {
      await expect(authenticate(req)).rejects.toBe(STORE_DOWN);
    }
  });
});
