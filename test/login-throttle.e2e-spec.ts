import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { createTestApp } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';

const WINDOW_SECONDS = 15 * 60;
const ACCOUNT_WINDOW_SECONDS = 60 * 60;

/** Asserts a login-throttling refusal: 429 `rate_limited` with `Retry-After` ≤ the longest window (the account's hour). */
function expectThrottled(res: Response): void {
  expect(res.status).toBe(429);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.body).toEqual(errorBody('rate_limited'));
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(ACCOUNT_WINDOW_SECONDS);
  expect(res.headers['set-cookie']).toBeUndefined();
}

/** Sends `count` failed logins for distinct, never-registered usernames (the per-username limit never triggers), `parallel` at a time. */
async function failManyUsernames(send: (username: string) => Promise<Response>, count: number, tag: string, parallel = 10): Promise<void> {
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, i) => send(`ghost_${tag}_${start + i}`));
    for (const res of await Promise.all(batch)) expect(res.status).toBe(401);
  }
}

describe('login throttling (docs/authentication.md#login-throttling), per username and client address', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());
  const login = (username: string, password: string) => api().post('/v1/login').send({ username, password });
  const signIn = (username: string, password: string) => api().post('/v1/sessions').send({ username, password });

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 5 failures for one username with 401, then 429 with Retry-After — even for the right password', async () => {
    const { user } = await createUser(app);
    for (let i = 0; i < 5; i += 1) {
      const res = await login(user.username, 'wrong-password');
      expect({ attempt: i + 1, status: res.status }).toEqual({ attempt: i + 1, status: 401 });
      expect(res.body).toEqual(errorBody('unauthorized', 'invalid username or password'));
    }
    const sixth = await login(user.username, DEFAULT_PASSWORD);
    expectThrottled(sixth);
    expect(sixth.body).not.toHaveProperty('token');
    expectThrottled(await login(user.username, 'wrong-password'));
    // the username is blocked for POST /v1/sessions too: one counter for both ways of signing in
    expectThrottled(await signIn(user.username, DEFAULT_PASSWORD));
  });

  it('lets another username log in from the same address meanwhile', async () => {
    const blocked = await createUser(app);
    const other = await createUser(app);
    for (let i = 0; i < 5; i += 1) expect((await login(blocked.user.username, 'wrong-password')).status).toBe(401);
    expectThrottled(await login(blocked.user.username, DEFAULT_PASSWORD));

    const res = await login(other.user.username, DEFAULT_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token: expect.any(String), token_type: 'Bearer' });
  });

  it('resets the username counter on a success: 4 failures, 1 success, 4 failures → still 401', async () => {
    const { user } = await createUser(app);
    for (let i = 0; i < 4; i += 1) expect((await login(user.username, 'wrong-password')).status).toBe(401);
    expect((await login(user.username, DEFAULT_PASSWORD)).status).toBe(200);
    for (let i = 0; i < 4; i += 1) {
      const res = await login(user.username, 'wrong-password');
      expect({ attempt: i + 1, status: res.status }).toEqual({ attempt: i + 1, status: 401 });
    }
    expect((await login(user.username, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it('throttles POST /v1/sessions the same way: 5 failures → 401, the 6th → 429; a success resets the counter', async () => {
    const { user } = await createUser(app);
    for (let i = 0; i < 4; i += 1) expect((await signIn(user.username, 'wrong-password')).status).toBe(401);
    const ok = await signIn(user.username, DEFAULT_PASSWORD);
    expect(ok.status).toBe(201);
    for (let i = 0; i < 5; i += 1) {
      const res = await signIn(user.username, 'wrong-password');
      expect({ attempt: i + 1, status: res.status }).toEqual({ attempt: i + 1, status: 401 });
      expect(res.body).toEqual(errorBody('unauthorized', 'invalid username or password'));
    }
    expectThrottled(await signIn(user.username, DEFAULT_PASSWORD));
    expectThrottled(await login(user.username, DEFAULT_PASSWORD));
  });

  it('counts failures of both operations together for one username', async () => {
    const { user } = await createUser(app);
    for (let i = 0; i < 3; i += 1) expect((await login(user.username, 'wrong-password')).status).toBe(401);
    for (let i = 0; i < 2; i += 1) expect((await signIn(user.username, 'wrong-password')).status).toBe(401);
    expectThrottled(await signIn(user.username, DEFAULT_PASSWORD));
  });

  it('holds under concurrency: 30 simultaneous wrong passwords for one username → at most 5 password checks (401), the rest 429', async () => {
    const { user } = await createUser(app);
    const results = await Promise.all(Array.from({ length: 30 }, () => login(user.username, 'wrong-password')));
    const checked = results.filter((res) => res.status === 401);
    expect(checked.length).toBeGreaterThanOrEqual(1);
    expect(checked.length).toBeLessThanOrEqual(5);
    for (const res of checked) expect(res.body).toEqual(errorBody('unauthorized', 'invalid username or password'));
    const refused = results.filter((res) => res.status !== 401);
    expect(refused).toHaveLength(30 - checked.length);
    for (const res of refused) expectThrottled(res);
    // and then the right password is refused too, on both ways of signing in
    expectThrottled(await login(user.username, DEFAULT_PASSWORD));
    expectThrottled(await signIn(user.username, DEFAULT_PASSWORD));
  });

  it('ignores X-Forwarded-For without TRUST_PROXY: a spoofed address does not escape the limit', async () => {
    const { user } = await createUser(app);
    for (let i = 0; i < 5; i += 1) {
      const res = await api()
        .post('/v1/login')
        .set('X-Forwarded-For', `203.0.113.${i + 1}`)
        .send({ username: user.username, password: 'wrong-password' });
      expect(res.status).toBe(401);
    }
    expectThrottled(await api().post('/v1/login').set('X-Forwarded-For', '198.51.100.99').send({ username: user.username, password: DEFAULT_PASSWORD }));
  });
});

describe('login throttling (docs/authentication.md#login-throttling), per client address: 100 failures', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    // a fresh application: a fresh address counter
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('lets valid users in below the limit, and answers 429 to everyone from the address after 100 failures', async () => {
    const early = await createUser(app);
    const late = await createUser(app);
    await failManyUsernames((username) => api().post('/v1/login').send({ username, password: 'wrong-password' }), 99, 'address');
    // an office behind one address: a valid login still works just below the limit
    const below = await api().post('/v1/login').send({ username: early.user.username, password: DEFAULT_PASSWORD });
    expect(below.status).toBe(200);
    // a success resets only that username's counter, not the address counter
    expect((await api().post('/v1/sessions').send({ username: 'ghost_address_last', password: 'wrong-password' })).status).toBe(401);

    expectThrottled(await api().post('/v1/login').send({ username: late.user.username, password: DEFAULT_PASSWORD }));
    expectThrottled(await api().post('/v1/sessions').send({ username: late.user.username, password: DEFAULT_PASSWORD }));
    expectThrottled(await api().post('/v1/login').send({ username: early.user.username, password: DEFAULT_PASSWORD }));
    // spoofing X-Forwarded-For without a trusted proxy does not help
    expectThrottled(await api().post('/v1/login').set('X-Forwarded-For', '198.51.100.1').send({ username: late.user.username, password: DEFAULT_PASSWORD }));
  });
});

describe('login throttling behind a proxy, TRUST_PROXY=1', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let make: () => Promise<CreatedUser>;
  const api = () => request(app.getHttpServer());
  const loginFrom = (address: string, username: string, password: string) =>
    api().post('/v1/login').set('X-Forwarded-For', address).send({ username, password });

  beforeAll(async () => {
    const fresh = await loadFreshApp({ TRUST_PROXY: '1' });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    make = () => fresh.createUser(app);
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('tells clients apart by X-Forwarded-For: a username blocked from one address still logs in from another', async () => {
    const { user } = await make();
    for (let i = 0; i < 5; i += 1) expect((await loginFrom('203.0.113.10', user.username, 'wrong-password')).status).toBe(401);
    expectThrottled(await loginFrom('203.0.113.10', user.username, DEFAULT_PASSWORD));
    expect((await loginFrom('203.0.113.11', user.username, DEFAULT_PASSWORD)).status).toBe(200);
    // the proxy's own address (the socket) is not what is counted
    expect((await api().post('/v1/login').send({ username: user.username, password: DEFAULT_PASSWORD })).status).toBe(200);
  });

  it('limits one account to 100 failures an hour from all addresses together (OWASP ASVS V2.2.1)', async () => {
    const target = await make();
    const bystander = await make();
    // 100 failures, 4 from each of 25 addresses: no (username, address) or address limit is reached
    for (let start = 0; start < 100; start += 10) {
      const batch = Array.from({ length: 10 }, (_, i) => loginFrom(`192.0.2.${Math.floor((start + i) / 4) + 1}`, target.user.username, 'wrong-password'));
      for (const res of await Promise.all(batch)) expect(res.status).toBe(401);
    }
    const refused = await loginFrom('203.0.113.200', target.user.username, DEFAULT_PASSWORD);
    expectThrottled(refused);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(WINDOW_SECONDS);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
    expectThrottled(
      await api().post('/v1/sessions').set('X-Forwarded-For', '203.0.113.201').send({ username: target.user.username, password: DEFAULT_PASSWORD }),
    );
    // another account from the same addresses still logs in
    expect((await loginFrom('192.0.2.1', bystander.user.username, DEFAULT_PASSWORD)).status).toBe(200);
  });

  it('blocks an address after 100 failures without blocking another forwarded address', async () => {
    const { user } = await make();
    await failManyUsernames((username) => loginFrom('198.51.100.7', username, 'wrong-password'), 100, 'proxy');
    expectThrottled(await loginFrom('198.51.100.7', user.username, DEFAULT_PASSWORD));
    const other = await loginFrom('198.51.100.8', user.username, DEFAULT_PASSWORD);
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ token: expect.any(String) });
  });
});
