import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Login } from '../src/auth/login.entity.js';
import { SharedStore } from '../src/store/shared-store.js';
import { bearer, createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';
import { createTestApp } from './setup/test-app.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

interface TokenLogin {
  token: string;
  refresh: string;
}
interface SessionLogin {
  cookie: string;
  sid: string;
  csrf: string;
}

describe('logins (docs/authentication.md#your-logins)', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());

  async function logIn(user: CreatedUser, agent: string): Promise<TokenLogin> {
    const res = await api().post('/v1/login').set('User-Agent', agent).send({ username: user.user.username, password: DEFAULT_PASSWORD });
    expect(res.status).toBe(200);
    return { token: res.body.token, refresh: res.body.refresh_token };
  }
  async function signIn(user: CreatedUser, agent: string): Promise<SessionLogin> {
    const res = await api().post('/v1/sessions').set('User-Agent', agent).send({ username: user.user.username, password: DEFAULT_PASSWORD });
    expect(res.status).toBe(201);
    const line = ((res.headers['set-cookie'] as unknown as string[]) ?? []).find((cookie) => cookie.startsWith('sid='));
    expect(line).toBeDefined();
    const cookie = line!.split(';')[0];
    return { cookie, sid: cookie.slice(4), csrf: res.body.csrf_token };
  }
  const list = (login: TokenLogin, query = '') => api().get(`/v1/logins${query}`).set('Authorization', bearer(login.token));
  /** A read with a login's access token: 200 while it works, 401 once it ended. */
  const me = (login: TokenLogin) => api().get('/v1/todos').set('Authorization', bearer(login.token));
  /** A new user whose factory login (user.token) is left out of its logins rows, so that each test counts its own. */
  const newUser = async (name: string): Promise<CreatedUser> => {
    const user = await createUser(app, { name });
    await app.get(DataSource).getRepository(Login).delete({ user_id: user.user.id });
    return user;
  };
  const refresh = (login: TokenLogin) => api().post('/v1/refresh').send({ refresh_token: login.refresh });
  const session = (login: SessionLogin) => api().get('/v1/sessions/current').set('Cookie', login.cookie);

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('lists token logins and sessions with address, user agent and times, the caller’s own marked current, and no secret', async () => {
    const alice = await newUser('Alice');
    const laptop = await logIn(alice, 'Laptop/1.0');
    const phone = await logIn(alice, 'Phone/2.0');
    const browser = await signIn(alice, 'Browser/3.0');
    const res = await list(laptop);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
    const byAgent = Object.fromEntries(res.body.data.map((item: Record<string, any>) => [item.user_agent, item]));
    expect(byAgent['Laptop/1.0']).toEqual({
      id: expect.any(Number),
      kind: 'token',
      current: true,
      address: expect.stringMatching(/127\.0\.0\.1|::1/),
      user_agent: 'Laptop/1.0',
      created_at: expect.stringMatching(ISO_MS),
      last_used_at: expect.stringMatching(ISO_MS),
      links: [{ rel: 'self', href: `/v1/logins/${byAgent['Laptop/1.0'].id}` }],
    });
    expect(byAgent['Phone/2.0']).toMatchObject({ kind: 'token', current: false });
    expect(byAgent['Browser/3.0']).toMatchObject({ kind: 'session', current: false });
    for (const secret of [laptop.token, laptop.refresh, phone.refresh, browser.sid, sha256(browser.sid), sha256(laptop.refresh)])
      expect(res.text).not.toContain(secret);
    // the session sees its own login as current; one read by id; fields= and sort by created_at
    const asSession = await api().get('/v1/logins?sort=created_at').set('Cookie', browser.cookie);
    expect(asSession.status).toBe(200);
    expect(asSession.body.data.map((item: Record<string, any>) => item.user_agent)).toEqual(['Laptop/1.0', 'Phone/2.0', 'Browser/3.0']);
    expect(asSession.body.data.map((item: Record<string, any>) => item.current)).toEqual([false, false, true]);
    const one = await api().get(`/v1/logins/${byAgent['Phone/2.0'].id}?fields=user_agent`).set('Authorization', bearer(laptop.token));
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ id: byAgent['Phone/2.0'].id, user_agent: 'Phone/2.0', links: [{ rel: 'self', href: `/v1/logins/${byAgent['Phone/2.0'].id}` }] });
    // a refresh pushes last_used_at and keeps the login
    const rotated = await refresh(phone);
    expect(rotated.status).toBe(200);
    const after = await list(laptop);
    expect(after.body.data).toHaveLength(3);
  });

  it('ending a token login: its access and refresh tokens answer 401, the other login still works; ending a session: its cookie answers 401', async () => {
    const bob = await newUser('Bob');
    const kept = await logIn(bob, 'Kept/1');
    const ended = await logIn(bob, 'Ended/1');
    const browser = await signIn(bob, 'Browser/1');
    const items: Array<Record<string, any>> = (await list(kept)).body.data;
    const id = (agent: string) => items.find((item) => item.user_agent === agent)!.id as number;
    const del = await api()
      .delete(`/v1/logins/${id('Ended/1')}`)
      .set('Authorization', bearer(kept.token));
    expect(del.status).toBe(204);
    expect((await me(ended)).status).toBe(401);
    expect((await refresh(ended)).status).toBe(401);
    expect((await me(kept)).status).toBe(200);
    const again = await api()
      .delete(`/v1/logins/${id('Ended/1')}`)
      .set('Authorization', bearer(kept.token));
    expect(again.status).toBe(404);
    expect(again.body).toEqual(errorBody('not_found', expect.any(String)));
    // a session ends by the API too, with its CSRF token when it ends itself
    expect((await session(browser)).status).toBe(200);
    const endSession = await api()
      .delete(`/v1/logins/${id('Browser/1')}`)
      .set('Authorization', bearer(kept.token));
    expect(endSession.status).toBe(204);
    expect((await session(browser)).status).toBe(401);
    expect((await list(kept)).body.data.map((item: Record<string, any>) => item.user_agent)).toEqual(['Kept/1']);
  });

  it('a session ended in the store (idle) is not listed, and its row goes', async () => {
    const carol = await newUser('Carol');
    const token = await logIn(carol, 'T/1');
    const idle = await signIn(carol, 'Idle/1');
    await app.get(SharedStore).delete(`session:${sha256(idle.sid)}`);
    const res = await list(token);
    expect(res.status).toBe(200);
    expect(res.body.data.map((item: Record<string, any>) => item.kind)).toEqual(['token']);
    expect(
      await app
        .get(DataSource)
        .getRepository(Login)
        .find({ where: { user_id: carol.user.id }, select: { kind: true } }),
    ).toEqual([{ kind: 'token' }]);
  });

  it('DELETE /v1/logins ends every login, the caller’s own included (a session’s cookie is cleared)', async () => {
    const dave = await newUser('Dave');
    const first = await logIn(dave, 'A/1');
    const second = await logIn(dave, 'B/1');
    const browser = await signIn(dave, 'C/1');
    const res = await api().delete('/v1/logins').set('Cookie', browser.cookie).set('X-CSRF-Token', browser.csrf);
    expect(res.status).toBe(204);
    expect(((res.headers['set-cookie'] as unknown as string[]) ?? []).some((line) => line.startsWith('sid=;'))).toBe(true);
    expect((await session(browser)).status).toBe(401);
    for (const login of [first, second]) {
      expect((await me(login)).status).toBe(401);
      expect((await refresh(login)).status).toBe(401);
    }
    const fresh = await logIn(dave, 'D/1');
    expect((await list(fresh)).body.data.map((item: Record<string, any>) => item.user_agent)).toEqual(['D/1']);
  });

  it('another user’s login → 404; an API key → 403; without credentials → 401', async () => {
    const erin = await newUser('Erin');
    const frank = await newUser('Frank');
    const erins = await logIn(erin, 'E/1');
    const id = (await list(erins)).body.data[0].id as number;
    for (const res of [
      await api().get(`/v1/logins/${id}`).set('Authorization', bearer(frank.token)),
      await api().delete(`/v1/logins/${id}`).set('Authorization', bearer(frank.token)),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody('not_found', expect.any(String)));
    }
    expect((await me(erins)).status).toBe(200);
    const key = await api()
      .post('/v1/api-keys')
      .set('Authorization', bearer(erin.token))
      .send({ name: 'k', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    for (const res of [
      await api().get('/v1/logins').set('X-API-Key', key.body.key),
      await api().delete('/v1/logins').set('X-API-Key', key.body.key),
      await api().delete(`/v1/logins/${id}`).set('X-API-Key', key.body.key),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden', expect.any(String)));
    }
    expect((await me(erins)).status).toBe(200);
    const anonymous = await api().get('/v1/logins');
    expect(anonymous.status).toBe(401);
  });

  it('a password change ends every login: none listed after, old tokens and session 401', async () => {
    const gina = await newUser('Gina');
    const login = await logIn(gina, 'G/1');
    const browser = await signIn(gina, 'G/2');
    const patch = await api().patch(`/v1/users/${gina.user.id}`).set('Authorization', bearer(login.token)).send({ password: 'a brand new secret' });
    expect(patch.status).toBe(200);
    expect((await me(login)).status).toBe(401);
    expect((await refresh(login)).status).toBe(401);
    expect((await session(browser)).status).toBe(401);
    expect(await app.get(DataSource).getRepository(Login).countBy({ user_id: gina.user.id })).toBe(0);
    const fresh = await api().post('/v1/login').send({ username: gina.user.username, password: 'a brand new secret' });
    expect(fresh.status).toBe(200);
    const listed = await list({ token: fresh.body.token, refresh: '' });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ current: true });
  });

  it('over a listening server with fetch: log in, list, end the other login', async () => {
    const server = app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const hank = await newUser('Hank');
    const login = async (agent: string) => {
      const res = await fetch(`${base}/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': agent },
        body: JSON.stringify({ username: hank.user.username, password: DEFAULT_PASSWORD }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { token: string };
    };
    const mine = await login('fetch/one');
    const other = await login('fetch/two');
    const listed = await fetch(`${base}/v1/logins`, { headers: { authorization: bearer(mine.token) } });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { data: Array<Record<string, any>> };
    expect(body.data.map((item) => [item.user_agent, item.current])).toEqual([
      ['fetch/one', true],
      ['fetch/two', false],
    ]);
    const ended = await fetch(`${base}/v1/logins/${body.data[1].id}`, { method: 'DELETE', headers: { authorization: bearer(mine.token) } });
    expect(ended.status).toBe(204);
    expect((await fetch(`${base}/v1/todos`, { headers: { authorization: bearer(other.token) } })).status).toBe(401);
    expect((await fetch(`${base}/v1/todos`, { headers: { authorization: bearer(mine.token) } })).status).toBe(200);
  });
});
