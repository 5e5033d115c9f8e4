import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { errorBody } from './setup/error-body.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { ensureBuilt, type ServerProcess, startServer } from './setup/server-process.js';

/**
 * The request-rate limit of every caller (docs/limits.md#rates), with small quotas: anonymous
 * requests per client address, registrations and sign-ins per address in policies of their own,
 * authenticated requests per user whatever the credential, password changes per user; the
 * draft-10 headers and the earlier draft's three; exact counts under concurrency; and two server
 * processes sharing one budget through Redis. The application trusts the loopback proxy
 * (TRUST_PROXY=loopback), so each test picks its client addresses with `X-Forwarded-For`.
 */
const QUOTAS = {
  RATE_LIMIT_PER_MINUTE: '5',
  RATE_LIMIT_USER_PER_MINUTE: '6',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '5',
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: '3',
  RATE_LIMIT_SIGN_INS_PER_MINUTE: '4',
  RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: '2',
};
const PASSWORD = 'password-123';
type Api = () => ReturnType<typeof request>;

let addressCounter = 0;
/** A client address no other test used (TEST-NET-2/3, distinct per process for a shared Redis). */
const newAddress = () => `198.51.${process.pid % 250}.${++addressCounter}`;

/** The five rate-limit headers of a response, and that the two drafts agree. */
function limitHeaders(res: request.Response): { policy: string; name: string; quota: number; window: number; remaining: number; reset: number } {
  const policy = res.headers['ratelimit-policy'];
  const limit = res.headers.ratelimit;
  expect(policy).toMatch(/^"[a-z_]+";q=\d+;w=\d+$/);
  expect(limit).toMatch(/^"[a-z_]+";r=\d+;t=\d+$/);
  const [, name, quota, window] = /^"([a-z_]+)";q=(\d+);w=(\d+)$/.exec(policy)!;
  const [, sameName, remaining, reset] = /^"([a-z_]+)";r=(\d+);t=(\d+)$/.exec(limit)!;
  expect(sameName).toBe(name);
  // the earlier draft's three say the same
  expect([res.headers['ratelimit-limit'], res.headers['ratelimit-remaining'], res.headers['ratelimit-reset']]).toEqual([quota, remaining, reset]);
  expect(Number(reset)).toBeLessThanOrEqual(Number(window));
  return { policy, name, quota: Number(quota), window: Number(window), remaining: Number(remaining), reset: Number(reset) };
}

/** A 429 of the limiter: `rate_limited`, `Retry-After` equal to the `t` of `RateLimit`, nothing left. */
function expectLimited(res: request.Response, policy: string): void {
  expect({ status: res.status, body: res.body }).toEqual({ status: 429, body: errorBody('rate_limited') });
  const headers = limitHeaders(res);
  expect([headers.name, headers.remaining]).toEqual([policy, 0]);
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(Number(res.headers['retry-after'])).toBe(headers.reset);
}

describe('rate limits of every caller (small quotas)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let fresh: Awaited<ReturnType<typeof loadFreshApp>>;
  let store: { counter(key: string): Promise<{ count: number; ttlMs: number } | null> };
  let login: (username: string) => Promise<string>;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    fresh = await loadFreshApp({ ...QUOTAS, TRUST_PROXY: 'loopback' });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    const { SharedStore } = await import('../src/store/shared-store.js');
    const { AuthService } = await import('../src/auth/auth.service.js');
    store = app.get(SharedStore);
    // a second token of a user without going through HTTP (and its sign-in budget)
    login = async (username) => ((await app.get(AuthService).login(username, PASSWORD, { address: '' })) as { token: string }).token;
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('registration: RATE_LIMIT_REGISTRATIONS_PER_HOUR per client address, refused before any hashing or writing', async () => {
    const address = newAddress();
    const register = (username: string, from = address) =>
      api().post('/v1/users').set('X-Forwarded-For', from).send({ username, password: 'long enough password', name: 'New User' });
    for (let i = 0; i < 3; i++) {
      const res = await register(`reg_${process.pid}_${i}`);
      expect(res.status).toBe(201);
      expect(limitHeaders(res)).toMatchObject({ policy: '"registration";q=3;w=3600', remaining: 2 - i });
    }
    const refused = await register(`reg_${process.pid}_over`);
    expectLimited(refused, 'registration');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
    // nothing was written: the username is still free
    expect(await app.get(fresh.DataSource).query(`SELECT id FROM users WHERE username = 'reg_${process.pid}_over'`)).toEqual([]);
    // another address registers; this address's general budget is untouched
    expect((await register(`reg_${process.pid}_other`, newAddress())).status).toBe(201);
    const general = await api().get('/.well-known/jwks.json').set('X-Forwarded-For', address);
    expect(limitHeaders(general)).toMatchObject({ name: 'anonymous', remaining: 4 });
  });

  it.each([
    ['GET /.well-known/jwks.json', (a: Api) => a().get('/.well-known/jwks.json')],
    ['GET /.well-known/oauth-authorization-server', (a: Api) => a().get('/.well-known/oauth-authorization-server')],
    ['POST /v1/refresh', (a: Api) => a().post('/v1/refresh').send({ refresh_token: 'not-a-refresh-token' })],
    ['GET /v1/oauth/authorize', (a: Api) => a().get('/v1/oauth/authorize?response_type=code&client_id=oc_unknown')],
    ['POST /v1/oauth/authorize', (a: Api) => a().post('/v1/oauth/authorize').type('form').send('decision=approve')],
    ['POST /v1/oauth/token', (a: Api) => a().post('/v1/oauth/token').type('form').send('grant_type=refresh_token&refresh_token=x&client_id=oc_x')],
    ['POST /v1/oauth/revoke', (a: Api) => a().post('/v1/oauth/revoke').type('form').send('token=x&client_id=oc_x')],
  ])('%s: RATE_LIMIT_ANONYMOUS_PER_MINUTE per client address', async (_name, send) => {
    const address = newAddress();
    for (let i = 0; i < 5; i++) {
      const res = await send(api).set('X-Forwarded-For', address);
      expect(res.status).not.toBe(429);
      expect(limitHeaders(res)).toMatchObject({ policy: '"anonymous";q=5;w=60', remaining: 4 - i });
    }
    expectLimited(await send(api).set('X-Forwarded-For', address), 'anonymous');
    // another address is not affected
    const other = await send(api).set('X-Forwarded-For', newAddress());
    expect(other.status).not.toBe(429);
  });

  it('sign-ins (login, session, OAuth sign-in form) share RATE_LIMIT_SIGN_INS_PER_MINUTE per address; a refused one is no failed login', async () => {
    const user = await fresh.createUser(app);
    const address = newAddress();
    const from = (req: request.Test) => req.set('X-Forwarded-For', address);
    // four wrong passwords over the three sign-in operations: each is a failed login (401)
    const wrong = { username: user.user.username, password: 'wrong password!' };
    const answers = [
      await from(api().post('/v1/login').send(wrong)),
      await from(api().post('/v1/sessions').send(wrong)),
      await from(
        api()
          .post('/v1/oauth/sign-in')
          .type('form')
          .send(`username=${wrong.username}&password=wrong&return_to=${encodeURIComponent('/v1/oauth/authorize?response_type=code')}`),
      ),
      await from(api().post('/v1/login').send(wrong)),
    ];
    expect(answers.map((res) => res.status)).toEqual([401, 401, 401, 401]);
    expect(answers.map((res) => limitHeaders(res).remaining)).toEqual([3, 2, 1, 0]);
    expect(limitHeaders(answers[0]).policy).toBe('"sign_in";q=4;w=60');
    // the fifth, even with the right password, is refused by the rate limit before the password check
    const refused = await from(api().post('/v1/login').send({ username: user.user.username, password: PASSWORD }));
    expectLimited(refused, 'sign_in');
    expect(refused.body.error).toMatch(/sign-ins from this client address/);
    expectLimited(await from(api().post('/v1/sessions').send({ username: user.user.username, password: PASSWORD })), 'sign_in');
    // the failed-login throttle counted the four checked attempts only (the two don't double count)
    expect((await store.counter(`login-failures:u:${user.user.username}|${address}`))?.count).toBe(4);
    expect((await store.counter(`login-failures:a:${address}`))?.count).toBe(4);
    // from another address the same account signs in (its failures stay under the throttle's 5)
    expect((await api().post('/v1/login').set('X-Forwarded-For', newAddress()).send({ username: user.user.username, password: PASSWORD })).status).toBe(200);
  });

  it('authenticated calls: RATE_LIMIT_USER_PER_MINUTE per user; two tokens and a session of one user share it, another user does not', async () => {
    const one = await fresh.createUser(app);
    const second = await login(one.user.username);
    const session = await api().post('/v1/sessions').set('X-Forwarded-For', newAddress()).send({ username: one.user.username, password: PASSWORD });
    expect(session.status).toBe(201);
    const cookie = (session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const calls = [
      () => api().get('/v1/todos').set('Authorization', `Bearer ${one.token}`),
      () => api().get('/v1/todos').set('Authorization', `Bearer ${second}`),
      () => api().get('/v1/todos').set('Cookie', cookie),
    ];
    // from different addresses, too: the budget is the user's
    for (let i = 0; i < 6; i++) {
      const res = await calls[i % 3]().set('X-Forwarded-For', newAddress());
      expect(res.status).toBe(200);
      expect(limitHeaders(res)).toMatchObject({ policy: '"user";q=6;w=60', remaining: 5 - i });
    }
    for (const call of calls) expectLimited(await call(), 'user');
    const other = await fresh.createUser(app);
    const theirs = await api().get('/v1/todos').set('Authorization', `Bearer ${other.token}`);
    expect(theirs.status).toBe(200);
    expect(limitHeaders(theirs)).toMatchObject({ name: 'user', remaining: 5 });
    // an API key of the limited user has its own budget (per key)
    const key = await api()
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${other.token}`)
      .send({ name: 'k', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    const byKey = await api().get('/v1/todos').set('X-API-Key', key.body.key);
    expect(limitHeaders(byKey)).toMatchObject({ policy: '"api_key";q=5;w=60', remaining: 4 });
  });

  it('a refused credential (401) counts as anonymous for its address: 401 with the headers, then 429; valid callers from there are unaffected', async () => {
    const address = newAddress();
    const junk = [
      () => api().get('/v1/todos').set('Authorization', 'Bearer junk.token.here'),
      () => api().get('/v1/todos').set('X-API-Key', 'rk_not-a-key'),
      () => api().get('/v1/todos').set('Cookie', 'sid=unknown-session'),
      () => api().get('/v1/todos'),
      () => api().get('/v1/todos').set('Authorization', 'Bearer junk.token.here'),
    ];
    for (const [i, send] of junk.entries()) {
      const res = await send().set('X-Forwarded-For', address);
      expect(res.status).toBe(401);
      expect(limitHeaders(res)).toMatchObject({ policy: '"anonymous";q=5;w=60', remaining: 4 - i });
    }
    expectLimited(await api().get('/v1/todos').set('Authorization', 'Bearer junk.token.here').set('X-Forwarded-For', address), 'anonymous');
    const user = await fresh.createUser(app);
    const valid = await api().get('/v1/todos').set('Authorization', `Bearer ${user.token}`).set('X-Forwarded-For', address);
    expect(valid.status).toBe(200);
    expect(limitHeaders(valid).name).toBe('user');
  });

  it('password changes: RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR per user (PUT and PATCH with a password); other updates count as ordinary calls', async () => {
    const target = await fresh.createUser(app);
    const changer = await fresh.createUser(app, { role: 'admin' });
    const auth = `Bearer ${changer.token}`;
    const patch = (body: object) => api().patch(`/v1/users/${target.user.id}`).set('Authorization', auth).send(body);
    const first = await patch({ password: 'new password one' });
    expect(first.status).toBe(200);
    expect(limitHeaders(first)).toMatchObject({ policy: '"password_change";q=2;w=3600', remaining: 1 });
    const second = await api().put(`/v1/users/${target.user.id}`).set('Authorization', auth).send({ name: 'Target', password: 'new password two' });
    expect(second.status).toBe(200);
    expect(limitHeaders(second)).toMatchObject({ name: 'password_change', remaining: 0 });
    const refused = await patch({ password: 'new password three' });
    expectLimited(refused, 'password_change');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    // the refused change did not happen: the second password still signs in
    expect(
      (await api().post('/v1/login').set('X-Forwarded-For', newAddress()).send({ username: target.user.username, password: 'new password two' })).status,
    ).toBe(200);
    const rename = await patch({ name: 'Renamed' });
    expect(rename.status).toBe(200);
    expect(limitHeaders(rename)).toMatchObject({ name: 'user', remaining: 5 });
  });

  it('30 parallel requests never get past a limit: exactly the quota succeeds (per address and per user)', async () => {
    const address = newAddress();
    const anonymous = await Promise.all(Array.from({ length: 30 }, () => api().get('/.well-known/jwks.json').set('X-Forwarded-For', address)));
    expect(anonymous.filter((res) => res.status !== 429)).toHaveLength(5);
    expect(anonymous.filter((res) => res.status === 429)).toHaveLength(25);
    expect(
      anonymous
        .filter((res) => res.status !== 429)
        .map((res) => limitHeaders(res).remaining)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);

    const user = await fresh.createUser(app);
    const authenticated = await Promise.all(Array.from({ length: 30 }, () => api().get('/v1/todos').set('Authorization', `Bearer ${user.token}`)));
    expect(authenticated.filter((res) => res.status === 200)).toHaveLength(6);
    expect(authenticated.filter((res) => res.status === 429)).toHaveLength(24);

    const registrations = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        api()
          .post('/v1/users')
          .set('X-Forwarded-For', address)
          .send({ username: `par_${process.pid}_${i}`, password: 'long enough password', name: 'New User' }),
      ),
    );
    expect(registrations.filter((res) => res.status === 201)).toHaveLength(3);
    expect(registrations.filter((res) => res.status === 429)).toHaveLength(27);
  });

  it('does not limit the health probes', async () => {
    for (let i = 0; i < 8; i++) {
      const res = await api().get('/health/live').set('X-Forwarded-For', '192.0.2.250');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });
});

/**
 * Two server processes with one Redis count one budget (the counters live in Redis, one atomic
 * hit per request), and the client address comes from the socket without TRUST_PROXY: a forged
 * `X-Forwarded-For` does not buy a new budget. Needs REDIS_URL; each process has its own SQLite
 * file (the anonymous budget needs no shared database).
 */
const describeRedis = process.env.REDIS_URL ? describe : describe.skip;

describeRedis('two instances share one budget through Redis', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  const dirs = [mkdtempSync(path.join(os.tmpdir(), 'resource-api-limits-a-')), mkdtempSync(path.join(os.tmpdir(), 'resource-api-limits-b-'))];

  beforeAll(async () => {
    ensureBuilt();
    const env = { ...QUOTAS, RATE_LIMIT_ANONYMOUS_PER_MINUTE: '10', REDIS_URL: process.env.REDIS_URL!, LOG_LEVEL: 'info' };
    [a, b] = await Promise.all([startServer(dirs[0], env), startServer(dirs[1], env)]);
    // a fresh budget for the loopback address: remove its counters left by an earlier run
    const { Redis } = await import('ioredis');
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      const keys = await redis.keys('resource-api:*rate:anonymous:*');
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  }, 240_000);
  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('alternating and parallel requests on A and B: exactly 10 pass in all, the rest get 429 on either', async () => {
    const sequential: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(i % 2 === 0 ? a.url : b.url)
        .get('/.well-known/jwks.json')
        .set('X-Forwarded-For', `203.0.113.${i}`);
      expect(res.status).not.toBe(429);
      sequential.push(limitHeaders(res).remaining);
    }
    // one budget, whichever instance answered and whatever X-Forwarded-For claimed
    expect(sequential).toEqual([9, 8, 7, 6]);
    const parallel = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(i % 2 === 0 ? a.url : b.url)
          .get('/.well-known/jwks.json')
          .set('X-Forwarded-For', `203.0.113.${100 + i}`),
      ),
    );
    expect(parallel.filter((res) => res.status !== 429)).toHaveLength(6);
    for (const server of [a, b]) {
      const refused = await request(server.url).get('/.well-known/jwks.json');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(errorBody('rate_limited'));
      expect(refused.headers.ratelimit).toMatch(/^"anonymous";r=0;t=\d+$/);
    }
  });
});
