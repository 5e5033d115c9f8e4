import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { GracefulShutdown } from '../src/health/graceful-shutdown.js';
import { ReadinessChecks } from '../src/health/readiness-checks.js';

const WITH_REDIS = Boolean(process.env.REDIS_URL);
import { createTestApp } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';

describe('health (docs/operations.md#health)', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('GET /health/live → 200 {status: "ok"}, public, never cached', async () => {
    const res = await api().get('/health/live');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /health/ready → 200 with the database check', async () => {
    const res = await api().get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const up = { status: 'up', response_time_ms: expect.any(Number) };
    // with REDIS_URL (CI's PostgreSQL phase) the shared state store is checked too
    expect(res.body).toEqual({ status: 'ok', role: 'all', checks: { database: up, ...(WITH_REDIS ? { redis: up } : {}) } });
    expect(res.body.checks.database.response_time_ms).toBeGreaterThanOrEqual(0);
  });

  it('ignores credentials, even bad ones (public), and is not rate-limited (no RateLimit-* with an API key)', async () => {
    for (const headers of [{ Authorization: 'Bearer not-a-token' }, { 'X-API-Key': 'not-a-key' }, { Cookie: 'sid=unknown' }]) {
      const res = await api().get('/health/ready').set(headers);
      expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('is unversioned: /v1/health/live is not a route', async () => {
    const res = await api().get('/v1/health/live');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody('not_found'));
  });

  it('answers other methods with 405 and Allow', async () => {
    const res = await api().post('/health/ready');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('is documented: public, both routes, 200 bodies, 503 ErrorResp only on /health/ready', async () => {
    const doc = (await api().get('/docs/v1/openapi.json')).body;
    const live = doc.paths['/health/live'].get;
    const ready = doc.paths['/health/ready'].get;
    expect(live.security).toBeUndefined();
    expect(ready.security).toBeUndefined();
    expect(live.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Liveness' });
    expect(live.responses['503']).toBeUndefined();
    expect(ready.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Readiness' });
    expect(ready.responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorResp' });
    expect(ready.responses['503'].headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    // every other operation may meet a database outage
    expect(doc.paths['/v1/todos'].post.responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorResp' });
  });
});

describe('readiness with failing dependencies and during shutdown', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());
  const TIMEOUT_MS = 2000; // HEALTH_CHECK_TIMEOUT_MS default

  beforeAll(async () => {
    app = await createTestApp();
    const checks = app.get(ReadinessChecks);
    checks.register('failing_dep', () => Promise.reject(new Error('ECONNREFUSED 10.1.2.3:6379 secret-internal-detail')));
    checks.register('hanging_dep', ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('refuses bad or duplicate check names', () => {
    const checks = app.get(ReadinessChecks);
    expect(() => checks.register('database', async () => undefined)).toThrow('readiness check database is already registered');
    expect(() => checks.register('Redis-Cache', async () => undefined)).toThrow('must be snake_case');
    expect([...checks.names()].sort()).toEqual([...(WITH_REDIS ? ['redis'] : []), 'database', 'failing_dep', 'hanging_dep'].sort());
  });

  it('→ 503 service_unavailable naming each failed dependency, within the check timeout, without internals', async () => {
    const started = Date.now();
    const res = await api().get('/health/ready');
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      error: 'not ready: failing_dep, hanging_dep unavailable',
      code: 'service_unavailable',
      details: [
        { field: 'failing_dep', message: 'unreachable or failing' },
        { field: 'hanging_dep', message: `no answer within ${TIMEOUT_MS} ms` },
      ],
      request_id: res.headers['x-request-id'],
    });
    expect(res.text).not.toContain('secret-internal-detail');
    expect(res.text).not.toContain('10.1.2.3');
    // bounded by HEALTH_CHECK_TIMEOUT_MS (generous margin for a loaded machine)
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 8000);
  });

  it('liveness stays 200 while a dependency is down', async () => {
    const res = await api().get('/health/live');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('→ 503 "shutting down" from the moment the application starts closing', async () => {
    // what Nest calls first on SIGTERM (the test server is not listening, so there is nothing to drain)
    app.get(GracefulShutdown).onModuleDestroy();
    expect(app.get(GracefulShutdown).isShuttingDown).toBe(true);
    await app.get(GracefulShutdown).beforeApplicationShutdown();
    const res = await api().get('/health/ready');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({ error: 'not ready: shutting down', code: 'service_unavailable', request_id: res.headers['x-request-id'] });
    expect((await api().get('/health/live')).status).toBe(200);
  });
});
