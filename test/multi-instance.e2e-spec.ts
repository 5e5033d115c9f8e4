import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, startServer, type ServerProcess } from './setup/server-process.js';
import { errorBody } from './setup/error-body.js';
import { RedisStore } from '../src/store/redis-store.js';

/**
 * Several instances behave as one (docs/operations.md#several-instances-and-redis): two real server processes on different
 * ports share PostgreSQL and Redis. Runs when DATABASE_URL is PostgreSQL and REDIS_URL is set (the
 * PostgreSQL phase of .ci/run); with SQLite or without Redis there is nothing shared to test.
 */
const shared = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') && Boolean(process.env.REDIS_URL);
const describeShared = shared ? describe : describe.skip;
const PASSWORD = 'correct-horse-battery';

describeShared('two instances behind a load balancer (PostgreSQL + Redis)', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  const username = `multi_${process.pid}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-multi-'));

  beforeAll(async () => {
    const env = {
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      // both instances must verify each other's tokens: one secret, as in any real deployment
      JWT_SECRET: 'multi-instance-secret-that-is-at-least-32-bytes',
      RATE_LIMIT_PER_MINUTE: '60',
    };
    ensureBuilt();
    // the files before this one share the Redis database and their ids restart with each test database:
    // a rate-limit block they left on `api_key:1` would refuse this file's key, so it starts empty too
    const store = await RedisStore.connect(process.env.REDIS_URL!, 1000);
    await store.clear();
    await store.onApplicationShutdown();
    [a, b] = await Promise.all([startServer(dir, env), startServer(dir, env)]);
    expect(a.port).not.toBe(b.port);
    const created = await request(a.url).post('/v1/users').send({ username, password: PASSWORD, name: 'Multi Instance' });
    expect(created.status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const login = async (server: ServerProcess) => {
    const res = await request(server.url).post('/v1/login').send({ username, password: PASSWORD });
    expect(res.status).toBe(200);
    return res.body as { token: string; refresh_token: string };
  };

  it('counts an API key’s rate limit across both: the 61st request of the minute gets 429 on either instance', async () => {
    const { token } = await login(a);
    const key = await request(a.url)
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: 'shared budget', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    const remaining: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      const server = i % 2 === 0 ? a : b;
      const res = await request(server.url).get('/v1/todos').set('X-API-Key', key.body.key);
      expect({ request: i + 1, status: res.status }).toEqual({ request: i + 1, status: 200 });
      remaining.push(Number(res.headers['ratelimit-remaining']));
    }
    // one budget: the remaining count falls by one per request whichever instance answered
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    for (const server of [b, a]) {
      const refused = await request(server.url).get('/v1/todos').set('X-API-Key', key.body.key);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(errorBody('rate_limited'));
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
  });

  it('an Idempotency-Key used on A is replayed on B; 30 requests with one key spread over both create one todo', async () => {
    const { token } = await login(a);
    const auth = `Bearer ${token}`;
    const total = async () => {
      const res = await request(a.url).get('/v1/todos').set('Authorization', auth);
      expect(res.status).toBe(200);
      return res.body.total as number;
    };
    const post = (server: ServerProcess, key: string, title: string) =>
      request(server.url).post('/v1/todos').set('Authorization', auth).set('Idempotency-Key', key).send({ title });
    const before = await total();
    const key = `multi-${process.pid}-${Date.now()}`;
    const first = await post(a, key, 'Once');
    expect(first.status).toBe(201);
    const onB = await post(b, key, 'Once');
    expect(onB.status).toBe(201);
    expect(onB.headers['idempotent-replayed']).toBe('true');
    expect(onB.headers.location).toBe(first.headers.location);
    expect(onB.text).toBe(first.text);
    const mismatch = await post(b, key, 'Twice');
    expect(mismatch.status).toBe(422);
    expect(mismatch.body).toEqual({ ...errorBody('validation_failed'), details: [{ field: 'Idempotency-Key', message: expect.any(String) }] });
    expect(await total()).toBe(before + 1);

    const raced = `${key}-raced`;
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => post(i % 2 === 0 ? a : b, raced, 'Raced')));
    expect(await total()).toBe(before + 2);
    const fresh = responses.filter((res) => res.status === 201 && res.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const res of responses) {
      expect([201, 409]).toContain(res.status);
      if (res.status === 201) expect(res.text).toBe(fresh[0].text);
      else expect(res.headers['retry-after']).toBe('1');
    }
  });

  it('logout on A makes the access token 401 on B', async () => {
    const { token } = await login(a);
    expect((await request(b.url).get('/v1/todos').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const out = await request(a.url).post('/v1/logout').set('Authorization', `Bearer ${token}`);
    expect(out.status).toBe(204);
    const after = await request(b.url).get('/v1/todos').set('Authorization', `Bearer ${token}`);
    expect(after.status).toBe(401);
    expect(after.body).toEqual(errorBody('unauthorized'));
  });

  it('a session created on A works on B, and is gone on B after DELETE on A', async () => {
    const signIn = await request(a.url).post('/v1/sessions').send({ username, password: PASSWORD });
    expect(signIn.status).toBe(201);
    const cookie = (signIn.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const onB = await request(b.url).get('/v1/sessions/current').set('Cookie', cookie);
    expect(onB.status).toBe(200);
    expect(onB.body.user.username).toBe(username);
    const out = await request(a.url).delete('/v1/sessions/current').set('Cookie', cookie).set('X-CSRF-Token', signIn.body.csrf_token);
    expect(out.status).toBe(204);
    const gone = await request(b.url).get('/v1/sessions/current').set('Cookie', cookie);
    expect(gone.status).toBe(401);
    expect(gone.body).toEqual(errorBody('unauthorized'));
  });

  it('a refresh token rotated on A is rejected on B', async () => {
    const { refresh_token } = await login(a);
    const rotated = await request(a.url).post('/v1/refresh').send({ refresh_token });
    expect(rotated.status).toBe(200);
    const reused = await request(b.url).post('/v1/refresh').send({ refresh_token });
    expect(reused.status).toBe(401);
    expect(reused.body).toEqual(errorBody('unauthorized'));
    // reuse revokes the whole login, on every instance: the pair just issued on A is spent too
    expect((await request(b.url).post('/v1/refresh').send({ refresh_token: rotated.body.refresh_token })).status).toBe(401);
  });
});
