import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { SharedStore } from '../src/store/shared-store.js';
import type { CreatedUser } from './factories/user.factory.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const PASSWORD = 'password-123'; // DEFAULT_PASSWORD of the user factory
const bearer = (token: string) => `Bearer ${token}`;

/** The `Set-Cookie` line for `sid` in a response, or undefined. */
function sidCookieLine(res: Response): string | undefined {
  const lines = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
  return lines.find((line) => line.startsWith('sid='));
}

/** The `sid=<value>` pair to send back in `Cookie`. */
function sidCookie(res: Response): string {
  const line = sidCookieLine(res);
  expect(line).toBeDefined();
  return line!.split(';')[0];
}

/** The attributes of a Set-Cookie line, lower-cased names, e.g. {path: '/', httponly: true}. */
function cookieAttributes(line: string): Record<string, string | true> {
  const [, ...attributes] = line.split(';').map((part) => part.trim());
  return Object.fromEntries(
    attributes.map((attribute) => {
      const eq = attribute.indexOf('=');
      return eq === -1 ? [attribute.toLowerCase(), true] : [attribute.slice(0, eq).toLowerCase(), attribute.slice(eq + 1)];
    }),
  );
}

// Idle expiry of one minute for this file: the configuration is read when AppModule is first
// imported, so the application is imported dynamically after setting it (see tokens.e2e-spec.ts).
describe('cookie sessions (docs/authentication.md#session-cookies), SESSION_IDLE_TTL=60', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  const saved = process.env.SESSION_IDLE_TTL;
  const api = () => request(app.getHttpServer());
  const signIn = (user: CreatedUser, password = PASSWORD) => api().post('/v1/sessions').send({ username: user.user.username, password });
  /** Signs in and returns the cookie pair and the CSRF token. */
  async function session(user: CreatedUser): Promise<{ cookie: string; sid: string; csrf: string }> {
    const res = await signIn(user);
    expect(res.status).toBe(201);
    const cookie = sidCookie(res);
    return { cookie, sid: cookie.slice('sid='.length), csrf: res.body.csrf_token };
  }
  /** The stored session of a `sid` (times in epoch ms), or null; and a way to rewrite its times. */
  const stored = async (sid: string) => {
    const raw = await app.get(SharedStore).get(`session:${sha256(sid)}`);
    return raw === null ? null : (JSON.parse(raw) as { last_seen_at: number; expires_at: number });
  };
  const patchStored = async (sid: string, changes: { last_seen_at?: number; expires_at?: number }) => {
    const session = await stored(sid);
    await app.get(SharedStore).set(`session:${sha256(sid)}`, JSON.stringify({ ...session, ...changes }), 60_000);
  };

  beforeAll(async () => {
    process.env.SESSION_IDLE_TTL = '60';
    const { createTestApp } = await import('./setup/test-app.js');
    const { createUser } = await import('./factories/user.factory.js');
    app = await createTestApp();
    alice = await createUser(app, { name: 'Alice' });
    bob = await createUser(app, { name: 'Bob' });
  });
  afterAll(async () => {
    await app?.close();
    if (saved === undefined) delete process.env.SESSION_IDLE_TTL;
    else process.env.SESSION_IDLE_TTL = saved;
  });

  describe('POST /v1/sessions', () => {
    it('signs in: 201 {user, csrf_token, expires_at}, Set-Cookie sid (HttpOnly, SameSite=Lax, Path=/, not Secure outside production), Cache-Control: no-store', async () => {
      const before = Date.now();
      const res = await signIn(alice);
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      const me = await api().get(`/v1/users/${alice.user.id}`).set('Authorization', bearer(alice.token));
      expect(res.body).toEqual({ user: me.body, csrf_token: expect.any(String), expires_at: expect.stringMatching(ISO_MS) });
      expect(res.body.user).toMatchObject({ id: alice.user.id, username: alice.user.username });
      expect(res.body.user).not.toHaveProperty('password_hash');
      expect(res.body.csrf_token.length).toBeGreaterThanOrEqual(32);
      // absolute lifetime SESSION_ABSOLUTE_TTL (default 12 h)
      const expiresAt = new Date(res.body.expires_at).getTime();
      expect(expiresAt).toBeGreaterThanOrEqual(before + 12 * 3600 * 1000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 12 * 3600 * 1000 + 1000);

      const line = sidCookieLine(res)!;
      expect(line).toMatch(/^sid=[A-Za-z0-9_-]{43};/);
      const attributes = cookieAttributes(line);
      expect(attributes).toMatchObject({ path: '/', httponly: true, samesite: 'Lax', 'max-age': '43200' });
      expect(attributes).not.toHaveProperty('secure');
      expect(attributes).not.toHaveProperty('domain');
      expect(res.text).not.toContain(line.split(';')[0].slice(4));
    });

    it('answers a wrong password and an unknown username with the same 401 and no cookie', async () => {
      const wrong = await signIn(alice, 'wrong-password');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual(errorBody('unauthorized', 'invalid username or password'));
      expect(sidCookieLine(wrong)).toBeUndefined();
      const unknown = await api().post('/v1/sessions').send({ username: 'nobody_here', password: PASSWORD });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error).toBe(wrong.body.error);
      expect(sidCookieLine(unknown)).toBeUndefined();
    });

    it('answers a missing password with 400', async () => {
      const res = await api().post('/v1/sessions').send({ username: alice.user.username });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
    });

    it('stores only the SHA-256 of the session id', async () => {
      const { sid, csrf } = await session(alice);
      const raw = await app.get(SharedStore).get(`session:${sha256(sid)}`);
      expect(raw).not.toBeNull();
      expect(JSON.parse(raw!)).toMatchObject({ user_id: alice.user.id, csrf_token: csrf });
      expect(raw!.includes(sid)).toBe(false);
      expect(await app.get(SharedStore).get(`session:${sid}`)).toBeNull();
    });
  });

  describe('the sid cookie on protected routes', () => {
    let cookie: string;
    let csrf: string;

    beforeAll(async () => {
      ({ cookie, csrf } = await session(alice));
    });

    it('GET /v1/sessions/current → 200 the same user and csrf_token, no-store', async () => {
      const res = await api().get('/v1/sessions/current').set('Cookie', cookie);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        user: expect.objectContaining({ id: alice.user.id, username: alice.user.username }),
        csrf_token: csrf,
        expires_at: expect.stringMatching(ISO_MS),
      });
    });

    it('GET /v1/todos → 200 without a CSRF token (safe method)', async () => {
      const res = await api().get('/v1/todos').set('Cookie', cookie);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: expect.any(Array), total: expect.any(Number) });
      // counted per user like any authenticated call (docs/limits.md#rates)
      expect(res.headers['ratelimit-policy']).toMatch(/^"user";q=\d+;w=60$/);
    });

    it('POST /v1/todos without X-CSRF-Token → 403 naming the header', async () => {
      const res = await api().post('/v1/todos').set('Cookie', cookie).send({ title: 'no csrf' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden', expect.stringContaining('X-CSRF-Token')));
    });

    it('POST /v1/todos with a wrong X-CSRF-Token → 403 (same length or not, another session’s token)', async () => {
      const other = await session(bob);
      const flipped = (csrf[0] === 'A' ? 'B' : 'A') + csrf.slice(1);
      for (const token of [flipped, 'short', `${csrf}x`, other.csrf]) {
        const res = await api().post('/v1/todos').set('Cookie', cookie).set('X-CSRF-Token', token).send({ title: 'bad csrf' });
        expect({ token, status: res.status }).toEqual({ token, status: 403 });
        expect(res.body).toEqual(errorBody('forbidden', expect.stringContaining('X-CSRF-Token')));
      }
      const list = await api().get('/v1/todos').set('Cookie', cookie);
      expect(list.body.data.some((t: { title: string }) => t.title === 'bad csrf')).toBe(false);
    });

    it('POST /v1/todos with the right X-CSRF-Token → 201 owned by the session user; PATCH and DELETE need it too', async () => {
      const res = await api().post('/v1/todos').set('Cookie', cookie).set('X-CSRF-Token', csrf).send({ title: 'with csrf' });
      expect(res.status).toBe(201);
      expect(res.body.owner).toBe(alice.user.id);
      expect(res.headers.location).toBe(`/v1/todos/${res.body.id}`);

      const patchNoToken = await api().patch(`/v1/todos/${res.body.id}`).set('Cookie', cookie).send({ status: 'done' });
      expect(patchNoToken.status).toBe(403);
      const patch = await api().patch(`/v1/todos/${res.body.id}`).set('Cookie', cookie).set('X-CSRF-Token', csrf).send({ status: 'done' });
      expect(patch.status).toBe(200);
      expect(patch.body.status).toBe('done');
      const delNoToken = await api().delete(`/v1/todos/${res.body.id}`).set('Cookie', cookie);
      expect(delNoToken.status).toBe(403);
      const del = await api().delete(`/v1/todos/${res.body.id}`).set('Cookie', cookie).set('X-CSRF-Token', csrf);
      expect(del.status).toBe(204);
    });

    it('answers an unknown or malformed sid with 401', async () => {
      for (const value of ['sid=' + 'A'.repeat(43), 'sid=garbage', 'sid=']) {
        const res = await api().get('/v1/sessions/current').set('Cookie', value);
        expect({ value, status: res.status }).toEqual({ value, status: 401 });
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="api"/);
        expect(res.body).toEqual(errorBody('unauthorized'));
      }
    });

    it('GET /v1/sessions/current with a Bearer token and no cookie → 401', async () => {
      const res = await api().get('/v1/sessions/current').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      const del = await api().delete('/v1/sessions/current').set('Authorization', bearer(alice.token));
      expect(del.status).toBe(401);
    });

    it('scheme precedence: the cookie with a junk Bearer → 401 (Bearer wins)', async () => {
      const res = await api().get('/v1/todos').set('Cookie', cookie).set('Authorization', 'Bearer junk');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
      expect(res.body).toEqual(errorBody('unauthorized'));
      // and a valid Bearer beside the cookie needs no CSRF token: the cookie is not the credential
      const post = await api().post('/v1/todos').set('Cookie', cookie).set('Authorization', bearer(bob.token)).send({ title: 'bearer decides' });
      expect(post.status).toBe(201);
      expect(post.body.owner).toBe(bob.user.id);
    });
  });

  describe('a new login', () => {
    it('gives a new sid; the previous one sent along at login is destroyed', async () => {
      const first = await session(alice);
      const second = await signIn(alice);
      expect(second.status).toBe(201);
      const secondCookie = sidCookie(second);
      expect(secondCookie).not.toBe(first.cookie);

      const third = await api().post('/v1/sessions').set('Cookie', secondCookie).send({ username: alice.user.username, password: PASSWORD });
      expect(third.status).toBe(201);
      const thirdCookie = sidCookie(third);
      expect(thirdCookie).not.toBe(secondCookie);
      expect(third.body.csrf_token).not.toBe(second.body.csrf_token);

      const old = await api().get('/v1/sessions/current').set('Cookie', secondCookie);
      expect(old.status).toBe(401);
      expect(old.body).toEqual(errorBody('unauthorized'));
      expect(await stored(secondCookie.slice(4))).toBeNull();
      expect((await api().get('/v1/sessions/current').set('Cookie', thirdCookie)).status).toBe(200);
      // a login that did not send the old cookie (another browser) leaves that session alone
      expect((await api().get('/v1/sessions/current').set('Cookie', first.cookie)).status).toBe(200);
    });
  });

  describe('DELETE /v1/sessions/current', () => {
    it('needs X-CSRF-Token (403), then 204 destroys the session and clears the cookie; the old cookie → 401', async () => {
      const { cookie, sid, csrf } = await session(alice);
      const noToken = await api().delete('/v1/sessions/current').set('Cookie', cookie);
      expect(noToken.status).toBe(403);
      expect(noToken.body).toEqual(errorBody('forbidden', expect.stringContaining('X-CSRF-Token')));
      expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(200);

      const res = await api().delete('/v1/sessions/current').set('Cookie', cookie).set('X-CSRF-Token', csrf);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const line = sidCookieLine(res);
      expect(line).toBeDefined();
      expect(line).toMatch(/^sid=;/);
      const attributes = cookieAttributes(line!);
      expect(attributes).toMatchObject({ path: '/', httponly: true, samesite: 'Lax' });
      expect(new Date(attributes.expires as string).getTime()).toBeLessThan(Date.now());
      expect(await stored(sid)).toBeNull();

      for (const path of ['/v1/sessions/current', '/v1/todos']) {
        const after = await api().get(path).set('Cookie', cookie);
        expect(after.status).toBe(401);
        expect(after.body).toEqual(errorBody('unauthorized'));
      }
    });
  });

  describe('deleting the user (docs/resources/users.md)', () => {
    it('ends their sessions, revokes their API keys, refresh tokens and access tokens at once', async () => {
      const { createUser } = await import('./factories/user.factory.js');
      const carol = await createUser(app, { name: 'Carol' });
      const { cookie, sid, csrf } = await session(carol);
      const key = await api()
        .post('/v1/api-keys')
        .set('Authorization', bearer(carol.token))
        .send({ name: 'k', scopes: ['todos:read'] });
      expect(key.status).toBe(201);
      expect((await api().get('/v1/todos').set('X-API-Key', key.body.key)).status).toBe(200);

      const removed = await api().delete(`/v1/users/${carol.user.id}`).set('Cookie', cookie).set('X-CSRF-Token', csrf);
      expect(removed.status).toBe(204);

      const viaCookie = await api().get('/v1/todos').set('Cookie', cookie);
      expect(viaCookie.status).toBe(401);
      expect(viaCookie.body).toEqual(errorBody('unauthorized'));
      // the store entry goes at its first use after the user's deletion (or at its time to live)
      expect(await stored(sid)).toBeNull();
      const viaKey = await api().get('/v1/todos').set('X-API-Key', key.body.key);
      expect(viaKey.status).toBe(401);
      expect(viaKey.body).toEqual(errorBody('unauthorized'));
      const refresh = await api().post('/v1/refresh').send({ refresh_token: carol.refreshToken });
      expect(refresh.status).toBe(401);
      // the access token too, although it has not expired (it is denied, not just unusable later)
      const viaBearer = await api().get('/v1/todos').set('Authorization', bearer(carol.token));
      expect(viaBearer.status).toBe(401);
      expect(viaBearer.body).toEqual(errorBody('unauthorized'));
    });

    it('leaves other users’ access tokens alone', async () => {
      const { createUser } = await import('./factories/user.factory.js');
      const [dave, erin] = [await createUser(app), await createUser(app)];
      expect((await api().delete(`/v1/users/${dave.user.id}`).set('Authorization', bearer(dave.token))).status).toBe(204);
      expect((await api().get('/v1/todos').set('Authorization', bearer(erin.token))).status).toBe(200);
    });
  });

  describe('expiry', () => {
    it('keeps a session used within SESSION_IDLE_TTL and slides last_seen_at', async () => {
      const { cookie, sid } = await session(alice);
      const halfAMinuteAgo = Date.now() - 30_000;
      await patchStored(sid, { last_seen_at: halfAMinuteAgo });
      expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(200);
      expect((await stored(sid))!.last_seen_at).toBeGreaterThan(halfAMinuteAgo + 20_000);
    });

    it('ends a session idle for longer than SESSION_IDLE_TTL (401, row deleted)', async () => {
      const { cookie, sid } = await session(alice);
      await patchStored(sid, { last_seen_at: Date.now() - 120_000 });
      const res = await api().get('/v1/sessions/current').set('Cookie', cookie);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(await stored(sid)).toBeNull();
    });

    it('ends a session past its absolute expires_at (401), however recently used', async () => {
      const { cookie, sid } = await session(alice);
      await patchStored(sid, { expires_at: Date.now() - 1000, last_seen_at: Date.now() });
      const res = await api().get('/v1/todos').set('Cookie', cookie);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(await stored(sid)).toBeNull();
    });
  });

  it('refuses API keys on the session operations (403)', async () => {
    const key = await api()
      .post('/v1/api-keys')
      .set('Authorization', bearer(alice.token))
      .send({ name: 'k', scopes: ['users:read'] });
    expect(key.status).toBe(201);
    const res = await api().get('/v1/sessions/current').set('X-API-Key', key.body.key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(errorBody('forbidden'));
  });
});

describe('cookie sessions in production (docs/authentication.md#session-cookies: Secure in production)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let user: CreatedUser;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    const fresh = await loadFreshApp({
      NODE_ENV: 'production',
      JWT_SECRET: 'production-test-secret-of-at-least-32-bytes',
      OAUTH_ISSUER: 'https://api.example.com',
    });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    user = await fresh.createUser(app);
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('sets and clears the sid cookie with Secure', async () => {
    const res = await api().post('/v1/sessions').send({ username: user.user.username, password: PASSWORD });
    expect(res.status).toBe(201);
    const line = sidCookieLine(res)!;
    expect(cookieAttributes(line)).toMatchObject({ path: '/', httponly: true, samesite: 'Lax', secure: true });

    const del = await api().delete('/v1/sessions/current').set('Cookie', sidCookie(res)).set('X-CSRF-Token', res.body.csrf_token);
    expect(del.status).toBe(204);
    const cleared = sidCookieLine(del)!;
    expect(cleared).toMatch(/^sid=;/);
    expect(cookieAttributes(cleared)).toMatchObject({ path: '/', httponly: true, samesite: 'Lax', secure: true });
  });
});
