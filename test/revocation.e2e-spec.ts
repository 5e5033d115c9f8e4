import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { bearer, createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

type Json = Record<string, unknown>;
const b64url = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An HS256 token signed with the test secret, i.e. exactly as the service signs. */
function signHs256(payload: Json): string {
  const input = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', process.env.JWT_SECRET as string)
    .update(input)
    .digest('base64url')}`;
}

/** Asserts the refusal of a bearer token: 401 `unauthorized` with the invalid_token challenge. */
function expectRevoked(res: Response): void {
  expect(res.status).toBe(401);
  expect(res.body).toEqual(errorBody('unauthorized'));
  expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
}

describe('authority is current (docs/authentication.md#logging-out-and-the-deny-list): role and password changes, deletion, refresh-token reuse', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());
  const me = (id: number, token: string) => api().get(`/v1/users/${id}`).set('Authorization', bearer(token));

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('password change', () => {
    it('refuses every earlier token at once, and a login right after the change works', async () => {
      const { user, token, refreshToken } = await createUser(app);
      const second = await api().post('/v1/login').send({ username: user.username, password: DEFAULT_PASSWORD });
      expect(second.status).toBe(200);
      const changed = await api().patch(`/v1/users/${user.id}`).set('Authorization', bearer(token)).send({ password: 'a brand new passphrase' });
      expect(changed.status).toBe(200);
      // immediately: the same second as the change, quite possibly
      const fresh = await api().post('/v1/login').send({ username: user.username, password: 'a brand new passphrase' });
      expect(fresh.status).toBe(200);
      expect((await me(user.id, fresh.body.token)).status).toBe(200);

      expectRevoked(await me(user.id, token));
      expectRevoked(await me(user.id, second.body.token));
      // the old password no longer works, and the logins made with it cannot be refreshed
      expect((await api().post('/v1/login').send({ username: user.username, password: DEFAULT_PASSWORD })).status).toBe(401);
      expect((await api().post('/v1/refresh').send({ refresh_token: refreshToken })).status).toBe(401);
      // the new login refreshes normally
      const refreshed = await api().post('/v1/refresh').send({ refresh_token: fresh.body.refresh_token });
      expect(refreshed.status).toBe(200);
      expect((await me(user.id, refreshed.body.token)).status).toBe(200);
    });

    it('does not revoke anything for a change that is neither role nor password', async () => {
      const { user, token } = await createUser(app);
      expect((await api().patch(`/v1/users/${user.id}`).set('Authorization', bearer(token)).send({ name: 'Renamed' })).status).toBe(200);
      expect((await me(user.id, token)).status).toBe(200);
    });
  });

  describe('role change', () => {
    it('takes admin rights away from a demoted admin at once, on every route', async () => {
      const boss = await createUser(app, { role: 'admin' });
      const demoted = await createUser(app, { role: 'admin' });
      expect((await api().get('/v1/users').set('Authorization', bearer(demoted.token))).status).toBe(200);

      const res = await api().patch(`/v1/users/${demoted.user.id}`).set('Authorization', bearer(boss.token)).send({ role: 'user' });
      expect(res.status).toBe(200);
      expect(res.body.role).toBe('user');

      expectRevoked(await api().get('/v1/users').set('Authorization', bearer(demoted.token)));
      expectRevoked(await me(demoted.user.id, demoted.token));
      // a token from a refresh carries the new role: no admin route
      const refreshed = await api().post('/v1/refresh').send({ refresh_token: demoted.refreshToken });
      expect(refreshed.status).toBe(200);
      expect(JSON.parse(Buffer.from(refreshed.body.token.split('.')[1], 'base64url').toString())).toMatchObject({ role: 'user' });
      expect((await api().get('/v1/users').set('Authorization', bearer(refreshed.body.token))).status).toBe(403);
      expect((await me(demoted.user.id, refreshed.body.token)).status).toBe(200);
      // the admin who made the change is untouched
      expect((await api().get('/v1/users').set('Authorization', bearer(boss.token))).status).toBe(200);
    });

    it('revokes the tokens of a promoted user too (a token must not understate or overstate its role)', async () => {
      const boss = await createUser(app, { role: 'admin' });
      const promoted = await createUser(app);
      expect((await api().put(`/v1/users/${promoted.user.id}`).set('Authorization', bearer(boss.token)).send({ name: 'Promoted', role: 'admin' })).status).toBe(
        200,
      );
      expectRevoked(await me(promoted.user.id, promoted.token));
      const login = await api().post('/v1/login').send({ username: promoted.user.username, password: DEFAULT_PASSWORD });
      expect((await api().get('/v1/users').set('Authorization', bearer(login.body.token))).status).toBe(200);
    });
  });

  describe('deletion and unknown users', () => {
    it('refuses the tokens of a deleted user', async () => {
      const boss = await createUser(app, { role: 'admin' });
      const gone = await createUser(app);
      expect((await api().delete(`/v1/users/${gone.user.id}`).set('Authorization', bearer(boss.token))).status).toBe(204);
      expectRevoked(await api().get('/v1/todos').set('Authorization', bearer(gone.token)));
    });

    it('answers 401 to a correctly signed token naming a user id that does not exist', async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = signHs256({
        user_id: 987_654,
        role: 'admin',
        typ: 'access',
        fid: randomUUID(),
        iat: now,
        iat_ms: now * 1000,
        exp: now + 300,
        jti: randomUUID(),
      });
      expectRevoked(await api().get('/v1/users').set('Authorization', bearer(token)));
      expectRevoked(await api().get('/v1/todos').set('Authorization', bearer(token)));
      // the same token for an existing user is accepted: the signature is right
      const { user } = await createUser(app);
      const valid = signHs256({
        user_id: user.id,
        role: 'user',
        typ: 'access',
        fid: randomUUID(),
        iat: now,
        iat_ms: Date.now(),
        exp: now + 300,
        jti: randomUUID(),
      });
      expect((await me(user.id, valid)).status).toBe(200);
    });
  });

  describe('refresh-token reuse and logout', () => {
    it('a rotated refresh token presented again revokes the access and refresh tokens of that login', async () => {
      const { user, token: a1, refreshToken: r1 } = await createUser(app);
      const other = await api().post('/v1/login').send({ username: user.username, password: DEFAULT_PASSWORD });
      const rotated = await api().post('/v1/refresh').send({ refresh_token: r1 });
      expect(rotated.status).toBe(200);
      const { token: a2, refresh_token: r2 } = rotated.body as { token: string; refresh_token: string };
      expect((await me(user.id, a2)).status).toBe(200);

      const reuse = await api().post('/v1/refresh').send({ refresh_token: r1 });
      expect(reuse.status).toBe(401);
      expect(reuse.body).toEqual(errorBody('unauthorized', expect.stringContaining('already used')));

      expectRevoked(await me(user.id, a2));
      expectRevoked(await me(user.id, a1));
      expect((await api().post('/v1/refresh').send({ refresh_token: r2 })).status).toBe(401);
      // another login of the same user is not affected
      expect((await me(user.id, other.body.token)).status).toBe(200);
      expect((await api().post('/v1/refresh').send({ refresh_token: other.body.refresh_token })).status).toBe(200);
    });

    it('30 concurrent refreshes with one refresh token: exactly one 200, and no pair of that login is valid afterwards', async () => {
      const { user, refreshToken } = await createUser(app);
      const results = await Promise.all(Array.from({ length: 30 }, () => api().post('/v1/refresh').send({ refresh_token: refreshToken })));
      const ok = results.filter((res) => res.status === 200);
      expect(ok).toHaveLength(1);
      for (const res of results.filter((r) => r.status !== 200)) expect(res.status).toBe(401);
      // the winner's pair belongs to a login that was reused: revoked too
      expectRevoked(await me(user.id, ok[0].body.token));
      expect((await api().post('/v1/refresh').send({ refresh_token: ok[0].body.refresh_token })).status).toBe(401);
    });

    it('logout refuses every access token of that login, not only the one presented', async () => {
      const { user, token: a1, refreshToken } = await createUser(app);
      const a2 = (await api().post('/v1/refresh').send({ refresh_token: refreshToken })).body.token as string;
      expect((await api().post('/v1/logout').set('Authorization', bearer(a2))).status).toBe(204);
      expectRevoked(await me(user.id, a2));
      expectRevoked(await me(user.id, a1));
    });
  });
});
