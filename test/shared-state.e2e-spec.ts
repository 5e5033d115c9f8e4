import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { RedisStore } from '../src/store/redis-store.js';
import type { HitOutcome } from '../src/store/rate-window.js';
import { DEFAULT_PASSWORD } from './factories/user.factory.js';
import { loadFreshApp, type FreshApp } from './setup/fresh-app.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, startServer } from './setup/server-process.js';
import { TcpProxy } from './setup/tcp-proxy.js';
import { errorBody } from './setup/error-body.js';

/**
 * The shared state in Redis (docs/operations.md#several-instances-and-redis): the rate-limit script against a real Redis, and
 * the documented Redis-down policy — rate limiting fails open, sessions, the deny list and login
 * counters fail closed with 503 — and recovery without a restart. Needs REDIS_URL (CI's
 * PostgreSQL phase sets it); without it these tests cannot run and are skipped.
 */
const REDIS_URL = process.env.REDIS_URL;
const describeWithRedis = REDIS_URL ? describe : describe.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithRedis('the Redis rate-limit script (same arithmetic as applyHit)', () => {
  let store: RedisStore;
  const key = `test-window-${process.pid}-${Date.now()}`;
  // ends the current window (and block) early, as time passing would
  const endWindow = async (k: string) => {
    const redis = (store as unknown as { redis: import('ioredis').Redis }).redis;
    for (const name of [`resource-api:hits:${k}`, `resource-api:block:${k}`]) await redis.pexpire(name, 1);
    await sleep(10);
  };

  beforeAll(async () => {
    store = await RedisStore.connect(REDIS_URL!, 1000);
  });
  afterAll(async () => {
    await store.onApplicationShutdown();
  });

  it('counts up to the limit, blocks hit limit + 1 until the window ends, and does not count refused hits', async () => {
    const outcomes: HitOutcome[] = [];
    for (let i = 0; i < 5; i += 1) outcomes.push(await store.hit(key, 60_000, 3, 0));
    expect(outcomes.map((o) => [o.hits, o.blocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
      [4, true],
    ]);
    for (const o of outcomes) expect(o.windowMs).toBeGreaterThan(59_000);
    expect(outcomes[0].blockMs).toBe(0);
    // blockDuration 0: the block ends with the window
    expect(Math.abs(outcomes[3].blockMs - outcomes[3].windowMs)).toBeLessThanOrEqual(5);

    await endWindow(key);
    const fresh = await store.hit(key, 60_000, 3, 0);
    expect(fresh).toEqual({ hits: 1, windowMs: 60_000, blocked: false, blockMs: 0 });
  });

  it('keeps a longer block past the end of the window, then opens a fresh window', async () => {
    const k = `${key}-block`;
    expect((await store.hit(k, 1000, 1, 0)).blocked).toBe(false);
    const blocked = await store.hit(k, 1000, 1, 120_000);
    expect(blocked).toMatchObject({ hits: 2, blocked: true });
    expect(blocked.blockMs).toBeGreaterThan(119_000);
    const redis = (store as unknown as { redis: import('ioredis').Redis }).redis;
    await redis.pexpire(`resource-api:hits:${k}`, 1);
    await sleep(10);
    // the window is gone, the block is not: refused with no window to report
    expect(await store.hit(k, 1000, 1, 120_000)).toMatchObject({ hits: 0, windowMs: 0, blocked: true });
    await endWindow(k);
    expect(await store.hit(k, 1000, 1, 120_000)).toEqual({ hits: 1, windowMs: 1000, blocked: false, blockMs: 0 });
  });

  it('counts with increment/counter in fixed windows and stores values with a time to live', async () => {
    const k = `${key}-counter`;
    expect(await store.counter(k)).toBeNull();
    expect(await store.increment(k, 5000)).toEqual({ count: 1, ttlMs: 5000 });
    const second = await store.increment(k, 5000);
    expect(second.count).toBe(2);
    expect(second.ttlMs).toBeLessThanOrEqual(5000);
    expect((await store.counter(k))!.count).toBe(2);
    // a time to live long enough that a busy machine reads the value before it expires
    await store.set(`${k}-value`, 'v', 1000);
    expect(await store.get(`${k}-value`)).toBe('v');
    await sleep(1100);
    expect(await store.get(`${k}-value`)).toBeNull();
    await store.delete(k);
    expect(await store.counter(k)).toBeNull();
  });

  it('reserves slots atomically (same arithmetic as applyAcquire): 30 concurrent attempts, limit 5 → exactly 5', async () => {
    const slots = [
      { key: `${key}-slot-u`, limit: 5, windowMs: 60_000 },
      { key: `${key}-slot-a`, limit: 100, windowMs: 60_000 },
    ];
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => store.acquire(slots)));
    expect(outcomes.filter((o) => o.acquired)).toHaveLength(5);
    for (const refused of outcomes.filter((o) => !o.acquired)) {
      expect(refused).toEqual({ acquired: false, retryAfterMs: expect.any(Number) });
      expect((refused as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(59_000);
    }
    // refused attempts counted nowhere
    expect(await store.counter(slots[0].key)).toMatchObject({ count: 5 });
    expect(await store.counter(slots[1].key)).toMatchObject({ count: 5 });
    await store.release(slots[0].key, slots[1].key, `${key}-slot-absent`);
    expect(await store.counter(slots[0].key)).toMatchObject({ count: 4 });
    expect(await store.counter(`${key}-slot-absent`)).toBeNull();
    expect(await store.acquire(slots)).toEqual({ acquired: true });
  });

  it('raises a value only forward (the not-before stamp), keeping the time to live given', async () => {
    const k = `${key}-raise`;
    expect(await store.raise(k, 1_700_000_000_500, 5000)).toBe(1_700_000_000_500);
    expect(await store.raise(k, 1_700_000_000_400, 5000)).toBe(1_700_000_000_500);
    expect(await Promise.all([store.raise(k, 1_700_000_000_900, 5000), store.raise(k, 1_700_000_000_600, 5000)])).toEqual([
      1_700_000_000_900, 1_700_000_000_900,
    ]);
    expect(await store.get(k)).toBe('1700000000900');
    await store.raise(k, 1, 50);
    await sleep(80);
    expect(await store.get(k)).toBeNull();
  });
});

describeWithRedis('Redis down (documented policy) and back', () => {
  let fresh: FreshApp & { restoreEnv: () => void };
  let app: NestExpressApplication;
  let proxy: TcpProxy;
  const api = () => request(app.getHttpServer());
  let token: string;
  let cookie: string;
  let apiKey: string;

  /** Retries `send` until it answers `status` (ioredis reconnects at most every second). */
  async function eventually(send: () => Promise<Response>, status: number): Promise<Response> {
    let res = await send();
    for (let i = 0; i < 40 && res.status !== status; i += 1) {
      await sleep(250);
      res = await send();
    }
    return res;
  }

  beforeAll(async () => {
    const target = new URL(REDIS_URL!);
    proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    await proxy.start();
    const viaProxy = new URL(REDIS_URL!);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    fresh = await loadFreshApp({ REDIS_URL: viaProxy.toString(), REDIS_TIMEOUT_MS: '500' });
    app = await fresh.createTestApp();
    const alice = await fresh.createUser(app);
    token = alice.token;
    const session = await api().post('/v1/sessions').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
    expect(session.status).toBe(201);
    cookie = (session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const key = await api()
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: 'ops', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    apiKey = key.body.key;
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
    fresh?.restoreEnv();
  });

  it('works through the proxy while Redis is up', async () => {
    expect((await api().get('/v1/todos').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(200);
    const viaKey = await api().get('/v1/todos').set('X-API-Key', apiKey);
    expect(viaKey.status).toBe(200);
    expect(viaKey.headers['ratelimit-remaining']).toBe('59');
    const ready = await api().get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toMatchObject({ database: { status: 'up' }, redis: { status: 'up' } });
  });

  it('with Redis cut: bearer tokens, sessions and logins fail closed (503 + Retry-After), API keys fail open', async () => {
    proxy.cut();
    const started = Date.now();
    for (const res of [
      await api().get('/v1/todos').set('Authorization', `Bearer ${token}`),
      await api().get('/v1/sessions/current').set('Cookie', cookie),
      await api().post('/v1/login').send({ username: 'anyone', password: DEFAULT_PASSWORD }),
    ]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual(errorBody('service_unavailable'));
      expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    }
    // answered promptly (commands never queue while Redis is away), not after a hang
    expect(Date.now() - started).toBeLessThan(10_000);
    // rate limiting is off, not the API: the key still works, reporting its full budget
    const viaKey = await api().get('/v1/todos').set('X-API-Key', apiKey);
    expect(viaKey.status).toBe(200);
    expect(viaKey.headers['ratelimit-limit']).toBe('60');
    expect(viaKey.headers['ratelimit-remaining']).toBe('60');
    // readiness names the failed dependency, so the balancer takes the instance out
    const ready = await api().get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ code: 'service_unavailable', details: [{ field: 'redis', message: expect.any(String) }] });
  });

  it('with Redis hanging (no answer at all): 503 after REDIS_TIMEOUT_MS, not a hung request', async () => {
    await proxy.restore();
    expect((await eventually(() => api().get('/v1/todos').set('Authorization', `Bearer ${token}`), 200)).status).toBe(200);
    proxy.blackhole();
    const started = Date.now();
    const res = await api().get('/v1/sessions/current').set('Cookie', cookie);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(errorBody('service_unavailable'));
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    // REDIS_TIMEOUT_MS is 500 here; generous margin for a busy machine
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('serves again once Redis is back, without a restart', async () => {
    await proxy.restore();
    expect((await eventually(() => api().get('/v1/todos').set('Authorization', `Bearer ${token}`), 200)).status).toBe(200);
    expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(200);
    const viaKey = await api().get('/v1/todos').set('X-API-Key', apiKey);
    expect(viaKey.status).toBe(200);
    expect((await api().get('/health/ready')).status).toBe(200);
    // counting resumed where it was: one hit before the outage (none counted during it), this one now
    expect(viaKey.headers['ratelimit-remaining']).toBe('58');
  });
});

describe('an unreachable Redis at start-up (docs/operations.md#configuration)', () => {
  let dir: string;
  let proxy: TcpProxy;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-redis-down-'));
    // a port that refuses connections: a proxy cut before anything connects
    proxy = new TcpProxy({ host: '127.0.0.1', port: 6379 });
    await proxy.start();
    proxy.cut();
  }, 300_000);
  afterAll(async () => {
    await proxy?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stops start-up with exit 1 and one line naming REDIS_URL', async () => {
    const failed = await startServer(dir, { REDIS_URL: `redis://127.0.0.1:${proxy.port}` }, 30_000).then(
      async (server) => {
        await server.kill();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failed).toContain('server exited before writing');
    const output = failed.slice(failed.indexOf('output:\n') + 'output:\n'.length);
    expect(output).toMatch(/^resource-api failed to start: Redis at REDIS_URL is unreachable: [^\n]+\n$/);
  });
});
