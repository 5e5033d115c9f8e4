import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bearer, createUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { bootFreshApp, loadFreshApp } from './setup/fresh-app.js';
import { parseSamples, type Sample, select, total } from './setup/prometheus-text.js';
import { TcpProxy } from './setup/tcp-proxy.js';
import { createTestApp } from './setup/test-app.js';

/**
 * Prometheus metrics and Server-Timing (README.md#metrics): the exposition format, the
 * route-template labels (ids never become series), status labels, requests in flight, the pool
 * gauges and statement histogram on the run's database (SQLite, or PostgreSQL + Redis when
 * DATABASE_URL/REDIS_URL say so), the limiter counters, the access rules of production and
 * METRICS_PORT, METRICS=false, and Server-Timing on and off.
 */

const postgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: 'production-metrics-test-secret-of-at-least-32-bytes', OAUTH_ISSUER: 'https://api.example.com' };
const TOKEN = 'metrics-token-0123456789-abcdefghij';
const SERVER_TIMING = /^db;dur=(\d+\.\d), total;dur=(\d+\.\d)$/;

async function scrape(app: NestExpressApplication): Promise<Sample[]> {
  const res = await request(app.getHttpServer()).get('/metrics');
  expect(res.status).toBe(200);
  return parseSamples(res.text);
}

describe('GET /metrics (default configuration: METRICS on, outside production)', () => {
  let app: NestExpressApplication;
  let token: string;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    ({ token } = await createUser(app));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('serves the Prometheus text format with the HTTP, database, Redis, limiter and runtime metrics, unversioned and uncached', async () => {
    await api().get('/health/live').expect(200);
    const res = await api().get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['server-timing']).toBeUndefined(); // SERVER_TIMING defaults to false
    for (const [name, type] of [
      ['http_server_request_duration_seconds', 'histogram'],
      ['http_server_active_requests', 'gauge'],
      ['db_client_operation_duration_seconds', 'histogram'],
      ['db_client_connection_max', 'gauge'],
      ['db_client_connection_count', 'gauge'],
      ['db_client_connection_pending_requests', 'gauge'],
      ['redis_command_failures_total', 'counter'],
      ['redis_connection_errors_total', 'counter'],
      ['rate_limit_refusals_total', 'counter'],
      ['process_cpu_user_seconds_total', 'counter'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
      ['nodejs_gc_duration_seconds', 'histogram'],
    ]) {
      expect(res.text).toContain(`# TYPE ${name} ${type}\n`);
      expect(res.text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
    }
    const samples = parseSamples(res.text);
    expect(total(samples, 'http_server_request_duration_seconds_count', { method: 'GET', route: '/health/live', status_code: '200' })).toBeGreaterThanOrEqual(
      1,
    );
    // a versioned prefix does not serve it
    expect((await api().get('/v1/metrics')).status).toBe(404);
  });

  it('labels by route template: 1000 different ids add no series, and no raw path appears', async () => {
    const created = await api().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'measured' });
    expect(created.status).toBe(201);
    await api().get(`/v1/todos/${created.body.id}`).set('Authorization', bearer(token)).expect(200);
    await api().get('/v1/todos/999999').set('Authorization', bearer(token)).expect(404);
    const before = await scrape(app);
    const seriesBefore = select(before, 'http_server_request_duration_seconds_count').length;
    const missesBefore = total(before, 'http_server_request_duration_seconds_count', { method: 'GET', route: '/v1/todos/{id}', status_code: '404' });

    for (let batch = 0; batch < 20; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api()
            .get(`/v1/todos/${1_000_000 + batch * 50 + i}`)
            .set('Authorization', bearer(token)),
        ),
      );
      for (const res of responses) expect(res.status).toBe(404);
    }

    const res = await api().get('/metrics');
    const after = parseSamples(res.text);
    // the scrape itself may add the /metrics series once; the ids add none
    const added = select(after, 'http_server_request_duration_seconds_count').filter((s) => !select(before, s.name, s.labels).length);
    expect(added.map((s) => s.labels.route).filter((route) => route !== '/metrics')).toEqual([]);
    expect(select(after, 'http_server_request_duration_seconds_count').length).toBeLessThanOrEqual(seriesBefore + 1);
    expect(total(after, 'http_server_request_duration_seconds_count', { method: 'GET', route: '/v1/todos/{id}', status_code: '404' })).toBe(
      missesBefore + 1000,
    );
    expect(total(after, 'http_server_request_duration_seconds_count', { method: 'GET', route: '/v1/todos/{id}', status_code: '200' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(res.text).not.toMatch(/route="\/v\d\/todos\/\d/);
    expect(res.text).not.toContain('/999999');
    // buckets are cumulative and end at +Inf = count
    const inf = total(after, 'http_server_request_duration_seconds_bucket', { method: 'GET', route: '/v1/todos/{id}', status_code: '404', le: '+Inf' });
    expect(inf).toBe(missesBefore + 1000);
  });

  it('labels the status code, refusals before routing as route "unmatched", and unknown methods as _OTHER', async () => {
    const before = await scrape(app);
    const count = (samples: Sample[], labels: Record<string, string>) => total(samples, 'http_server_request_duration_seconds_count', labels);
    expect((await api().post('/v1/todos').send({ title: 'x' })).status).toBe(401);
    expect((await api().get('/no/such/path/12345')).status).toBe(404);
    expect((await api().get('/v1/todos?title=%00')).status).toBe(400);
    const odd = await api().search('/v1/todos');
    expect([404, 405, 501]).toContain(odd.status);
    const after = await scrape(app);
    expect(count(after, { method: 'POST', route: '/v1/todos', status_code: '401' })).toBe(
      count(before, { method: 'POST', route: '/v1/todos', status_code: '401' }) + 1,
    );
    expect(count(after, { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(
      count(before, { method: 'GET', route: 'unmatched', status_code: '404' }) + 1,
    );
    expect(
      count(after, { method: 'GET', route: 'unmatched', status_code: '400' }) + count(after, { method: 'GET', route: '/v1/todos', status_code: '400' }),
    ).toBe(
      count(before, { method: 'GET', route: 'unmatched', status_code: '400' }) + count(before, { method: 'GET', route: '/v1/todos', status_code: '400' }) + 1,
    );
    expect(count(after, { method: '_OTHER' })).toBe(count(before, { method: '_OTHER' }) + 1);
    const text = (await api().get('/metrics')).text;
    expect(text).not.toContain('/no/such/path');
    expect(text).not.toContain('SEARCH');
  });

  it('counts requests in flight: a request whose body is still arriving is in flight until it ends', async () => {
    const server = app.getHttpServer() as http.Server;
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const active = async () => total(await scrape(app), 'http_server_active_requests');
    // the scrape itself is in flight while it is answered
    expect(await active()).toBe(1);
    const pending = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/todos',
      headers: { 'Content-Type': 'application/json', 'Content-Length': '100', Authorization: bearer(token) },
    });
    pending.on('error', () => undefined);
    pending.write('{"title":');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await active()).toBe(2);
    pending.destroy();
    for (let i = 0; i < 50 && (await active()) !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await active()).toBe(1);
  });

  it('reports the pool (PostgreSQL: pg-pool counters; SQLite: one connection) and times statements by kind, under 30 concurrent requests', async () => {
    const before = await scrape(app);
    const responses = await Promise.all(Array.from({ length: 30 }, () => api().get('/v1/todos').set('Authorization', bearer(token))));
    for (const res of responses) expect(res.status).toBe(200);
    const after = await scrape(app);
    const max = total(after, 'db_client_connection_max');
    const idle = total(after, 'db_client_connection_count', { state: 'idle' });
    const used = total(after, 'db_client_connection_count', { state: 'used' });
    if (postgres) {
      expect(max).toBe(10); // DB_POOL_SIZE default
      expect(idle + used).toBeGreaterThanOrEqual(1);
      expect(idle + used).toBeLessThanOrEqual(max);
    } else {
      expect({ max, idle, used }).toEqual({ max: 1, idle: 1, used: 0 });
    }
    expect(total(after, 'db_client_connection_pending_requests')).toBe(0);
    const selects = (samples: Sample[]) => total(samples, 'db_client_operation_duration_seconds_count', { operation: 'SELECT' });
    expect(selects(after)).toBeGreaterThanOrEqual(selects(before) + 30);
    expect(total(after, 'db_client_operation_duration_seconds_sum', { operation: 'SELECT' })).toBeGreaterThan(0);
  });

  it('counts login-throttle refusals (429) in rate_limit_refusals_total{limiter="login"}', async () => {
    const user = await createUser(app);
    const refused = async () => total(await scrape(app), 'rate_limit_refusals_total', { limiter: 'login' });
    const before = await refused();
    let throttled = 0;
    for (let i = 0; i < 7; i++) {
      const res = await api().post('/v1/login').send({ username: user.user.username, password: 'wrong-password' });
      expect([401, 429]).toContain(res.status);
      if (res.status === 429) throttled++;
    }
    expect(throttled).toBe(2);
    expect(await refused()).toBe(before + 2);
  });
});

describe('Server-Timing on (SERVER_TIMING=true) and the API-key rate-limit counter (RATE_LIMIT_PER_MINUTE=2)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let token: string;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    const fresh = await loadFreshApp({ SERVER_TIMING: 'true', RATE_LIMIT_PER_MINUTE: '2' });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    ({ token } = await fresh.createUser(app));
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('adds db and total (ms) to every response: database time of a list, 0 for a liveness probe, errors included', async () => {
    await api().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'timed' }).expect(201);
    const list = await api().get('/v1/todos').set('Authorization', bearer(token));
    expect(list.status).toBe(200);
    const [, db, totalMs] = SERVER_TIMING.exec(list.headers['server-timing']) ?? [];
    expect(Number(db)).toBeGreaterThan(0);
    expect(Number(db)).toBeLessThanOrEqual(Number(totalMs) + 0.1);
    const live = await api().get('/health/live');
    expect(live.headers['server-timing']).toMatch(/^db;dur=0\.0, total;dur=\d+\.\d$/);
    const missing = await api().get('/no/such/path');
    expect(missing.status).toBe(404);
    expect(missing.headers['server-timing']).toMatch(SERVER_TIMING);
    // 30 concurrent requests each get their own figures (the contexts do not mix); a page of 20
    // todos, so that a list's statements take measurably more than the header's 0.1 ms resolution
    // (an empty list can take less on a fast machine and show 0.0)
    for (let i = 0; i < 20; i++)
      await api()
        .post('/v1/todos')
        .set('Authorization', bearer(token))
        .send({ title: `timed ${i}` })
        .expect(201);
    const many = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? api().get('/health/live') : api().get('/v1/todos').set('Authorization', bearer(token)))),
    );
    many.forEach((res, i) => {
      const [, dbMs] = SERVER_TIMING.exec(res.headers['server-timing']) ?? [];
      if (i % 2) expect(dbMs).toBe('0.0');
      else expect(Number(dbMs)).toBeGreaterThan(0);
    });
  });

  it('counts API-key rate-limit refusals in rate_limit_refusals_total{limiter="api_key"}', async () => {
    const refused = async () => total(parseSamples((await api().get('/metrics')).text), 'rate_limit_refusals_total', { limiter: 'api_key' });
    const before = await refused();
    const key = await api()
      .post('/v1/api-keys')
      .set('Authorization', bearer(token))
      .send({ name: 'metered', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await api().get('/v1/todos').set('X-API-Key', key.body.key)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(await refused()).toBe(before + 2);
  });
});

describe('METRICS=false', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;

  beforeAll(async () => {
    ({ app, restoreEnv } = await bootFreshApp({ METRICS: 'false' }));
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('has no /metrics (404 like any unknown path) and no Server-Timing', async () => {
    const res = await request(app.getHttpServer()).get('/metrics');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody('not_found', 'no route for /metrics'));
    expect((await request(app.getHttpServer()).get('/health/live')).headers['server-timing']).toBeUndefined();
  });
});

describe('GET /metrics in production', () => {
  describe('with METRICS_TOKEN', () => {
    let app: NestExpressApplication;
    let restoreEnv: () => void;
    const api = () => request(app.getHttpServer());

    beforeAll(async () => {
      ({ app, restoreEnv } = await bootFreshApp({ ...PRODUCTION, METRICS_TOKEN: TOKEN }));
    });
    afterAll(async () => {
      await app?.close();
      restoreEnv?.();
    });

    it.each([
      ['no Authorization', undefined],
      ['a wrong token', `Bearer ${TOKEN.slice(0, -1)}x`],
      ['a longer token', `Bearer ${TOKEN}x`],
      ['the token as Basic', `Basic ${TOKEN}`],
      ['the token without a scheme', TOKEN],
      ['an API JWT', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x'],
    ])('answers 401 with ErrorResp and WWW-Authenticate to %s', async (_case, authorization) => {
      const req = api().get('/metrics');
      const res = await (authorization === undefined ? req : req.set('Authorization', authorization));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.text).not.toContain(TOKEN);
    });

    it('answers 200 with Authorization: Bearer <METRICS_TOKEN> (scheme in any case); the token never appears in the metrics', async () => {
      for (const scheme of ['Bearer', 'bearer']) {
        const res = await api().get('/metrics').set('Authorization', `${scheme} ${TOKEN}`);
        expect(res.status).toBe(200);
        expect(res.text).toContain('# TYPE http_server_request_duration_seconds histogram');
        expect(res.text).not.toContain(TOKEN);
        expect(res.text).not.toContain(PRODUCTION.JWT_SECRET);
      }
    });

    it('answers 30 concurrent scrapes, right and wrong tokens mixed, each correctly', async () => {
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          api()
            .get('/metrics')
            .set('Authorization', `Bearer ${i % 2 ? TOKEN : 'wrong-token-of-some-length'}`),
        ),
      );
      responses.forEach((res, i) => expect(res.status).toBe(i % 2 ? 200 : 401));
    });
  });

  it('without METRICS_TOKEN: 404 like an unknown path, whatever the Authorization', async () => {
    const { app, restoreEnv } = await bootFreshApp({ ...PRODUCTION, METRICS_TOKEN: undefined });
    try {
      for (const authorization of [undefined, `Bearer ${TOKEN}`]) {
        const req = request(app.getHttpServer()).get('/metrics');
        const res = await (authorization === undefined ? req : req.set('Authorization', authorization));
        expect(res.status).toBe(404);
        expect(res.body).toEqual(errorBody('not_found', 'no route for /metrics'));
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
    } finally {
      await app.close();
      restoreEnv();
    }
  });
});

describe('METRICS_PORT: metrics on a separate port, not on the service port', () => {
  it.each([
    ['outside production, without token: open', {}, undefined],
    ['in production with METRICS_TOKEN: the token is needed there', { ...PRODUCTION, METRICS_TOKEN: TOKEN }, TOKEN],
  ])('%s', async (_case, env, token) => {
    const fresh = await loadFreshApp({ ...env, METRICS_PORT: '0' });
    let app: NestExpressApplication | undefined;
    try {
      app = await fresh.createTestApp();
      const { MetricsLifecycle } = await import('../src/observability/metrics/metrics.module.js');
      const port = app.get(MetricsLifecycle).metricsPort;
      expect(port).toEqual(expect.any(Number));
      const main = await request(app.getHttpServer()).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
      expect(main.status).toBe(404);
      expect(main.body).toEqual(errorBody('not_found', 'no route for /metrics'));

      const side = request(`http://127.0.0.1:${port}`);
      const open = await side.get('/metrics');
      if (token === undefined) {
        expect(open.status).toBe(200);
        expect(open.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
        expect(open.text).toContain('# TYPE http_server_active_requests gauge');
      } else {
        expect(open.status).toBe(401);
        expect(open.body).toEqual(errorBody('unauthorized'));
        expect(open.headers['www-authenticate']).toBe('Bearer realm="metrics"');
        const ok = await side.get('/metrics').set('Authorization', `Bearer ${token}`);
        expect(ok.status).toBe(200);
        expect(ok.text).not.toContain(token);
      }
      // nothing of the API on the metrics port
      const api = await side.get('/v1/todos');
      expect(api.status).toBe(404);
      expect(api.body).toEqual(errorBody('not_found'));
      expect((await side.post('/metrics')).status).toBe(405);
    } finally {
      await app?.close();
      fresh.restoreEnv();
    }
  });
});

(process.env.REDIS_URL ? describe : describe.skip)('Redis failures (REDIS_URL through a TCP proxy that is cut)', () => {
  let app: NestExpressApplication;
  let proxy: TcpProxy;
  let fresh: Awaited<ReturnType<typeof loadFreshApp>>;
  let token: string;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    const redisUrl = new URL(process.env.REDIS_URL!);
    proxy = new TcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    await proxy.start();
    redisUrl.hostname = '127.0.0.1';
    redisUrl.port = String(proxy.port);
    fresh = await loadFreshApp({ REDIS_URL: redisUrl.toString(), REDIS_TIMEOUT_MS: '500' });
    app = await fresh.createTestApp();
    ({ token } = await fresh.createUser(app));
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
    fresh?.restoreEnv();
  });

  it('counts each failed command in redis_command_failures_total and the connection errors', async () => {
    const before = await scrape(app);
    proxy.cut();
    for (let i = 0; i < 3; i++) expect((await api().get('/v1/todos').set('Authorization', bearer(token))).status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a reconnection attempt fails meanwhile
    const after = await scrape(app);
    expect(total(after, 'redis_command_failures_total')).toBeGreaterThanOrEqual(total(before, 'redis_command_failures_total') + 3);
    expect(total(after, 'redis_connection_errors_total')).toBeGreaterThan(total(before, 'redis_connection_errors_total'));
    expect(total(after, 'http_server_request_duration_seconds_count', { method: 'GET', route: '/v1/todos', status_code: '503' })).toBe(3);
  });
});
