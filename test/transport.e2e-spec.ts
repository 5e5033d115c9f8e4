import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { bootFreshApp } from './setup/fresh-app.js';
import { createTestApp } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const REGISTRATION = { username: 'cors_user', password: 'correct-horse-1', name: 'Cors User' };

const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-expose-headers',
  'access-control-max-age',
];
const corsHeadersOf = (res: request.Response) => CORS_HEADERS.filter((name) => res.headers[name] !== undefined);

describe('security headers (helmet, docs/wire.md#security-headers) outside production', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['GET', '/health/live', 200],
    ['GET', '/v1/todos', 401],
    ['GET', '/v1/nothing-here', 404],
    ['DELETE', '/v1/todos', 405],
    ['POST', '/v1/users', 400],
  ])('%s %s (%d) carries helmet headers and a deny-all CSP', async (method, route, status) => {
    const res = await api()[method.toLowerCase() as 'get'](route);
    expect(res.status).toBe(status);
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(res.headers['x-powered-by']).toBeUndefined();
    // HSTS only in production
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('gives the docs page a CSP that lets Swagger UI load its own scripts and styles', async () => {
    const res = await api().get('/docs/');
    expect(res.status).toBe(200);
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self' https: 'unsafe-inline'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends no CORS header at all when CORS_ORIGINS is empty, and refuses preflights with 403 (never 405)', async () => {
    const simple = await api().post('/v1/users').set('Origin', ALLOWED).send(REGISTRATION);
    expect(simple.status).toBe(201);
    expect(corsHeadersOf(simple)).toEqual([]);
    expect(simple.headers.vary ?? '').not.toContain('Origin');
    const preflight = await api().options('/v1/users').set('Origin', ALLOWED).set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(403);
    expect(preflight.body).toEqual(errorBody('forbidden'));
    expect(corsHeadersOf(preflight)).toEqual([]);
  });

  it('ignores X-Forwarded-Proto outside production', async () => {
    const res = await api().get('/health/live').set('X-Forwarded-Proto', 'http');
    expect(res.status).toBe(200);
  });
});

describe('CORS for CORS_ORIGINS (docs/wire.md#cors)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    ({ app, restoreEnv } = await bootFreshApp({ CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` }));
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it.each([
    ['/v1/users', 'POST', 'Content-Type'],
    ['/v1/todos/1', 'PATCH', 'Authorization, Content-Type'],
    ['/v1/orders', 'POST', 'X-API-Key, Content-Type'],
    ['/v1/sessions/current', 'DELETE', 'X-CSRF-Token'],
  ])('preflight of %s %s from an allowed origin → 204 with the allowed methods and headers', async (route, method, requested) => {
    const res = await api().options(route).set('Origin', ALLOWED).set('Access-Control-Request-Method', method).set('Access-Control-Request-Headers', requested);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(res.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-API-Key, X-CSRF-Token, X-Request-Id, Idempotency-Key, If-Match, If-None-Match',
    );
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers.vary).toContain('Origin');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('preflight from another origin → 403 ErrorResp without CORS headers', async () => {
    const res = await api().options('/v1/users').set('Origin', OTHER).set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: `origin ${OTHER} may not call this API from a browser (not in CORS_ORIGINS)`,
      code: 'forbidden',
      request_id: res.headers['x-request-id'],
    });
    expect(corsHeadersOf(res)).toEqual([]);
    expect(res.headers.vary).toContain('Origin');
  });

  it('an OPTIONS without Access-Control-Request-Method is no preflight: 405 with Allow as before', async () => {
    const res = await api().options('/v1/users').set('Origin', ALLOWED);
    expect(res.status).toBe(405);
    expect(res.body).toEqual(errorBody('method_not_allowed'));
  });

  it('a request from an allowed origin gets Allow-Origin, credentials and the exposed headers', async () => {
    const res = await api().post('/v1/users').set('Origin', 'http://localhost:5173').send(REGISTRATION);
    expect(res.status).toBe(201);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const exposed = res.headers['access-control-expose-headers'].split(', ');
    for (const name of [
      'Location',
      'ETag',
      'X-Request-Id',
      'Retry-After',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'WWW-Authenticate',
      'Link',
      'Idempotent-Replayed',
    ])
      expect(exposed).toContain(name);
    expect(res.headers.vary).toContain('Origin');
  });

  it('errors from an allowed origin are readable too (401 with CORS headers)', async () => {
    const res = await api().get('/v1/todos').set('Origin', ALLOWED);
    expect(res.status).toBe(401);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('a request from another origin is served without CORS headers (the browser keeps the answer from the page)', async () => {
    const res = await api().get('/health/live').set('Origin', OTHER);
    expect(res.status).toBe(200);
    expect(corsHeadersOf(res)).toEqual([]);
    expect(res.headers.vary).toContain('Origin');
  });

  it('a request without Origin gets no CORS headers', async () => {
    const res = await api().get('/health/live');
    expect(res.status).toBe(200);
    expect(corsHeadersOf(res)).toEqual([]);
  });
});

describe('production behind a trusted proxy (docs/operations.md#tls)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  const api = () => request(app.getHttpServer());
  const HSTS = 'max-age=31536000; includeSubDomains';

  beforeAll(async () => {
    ({ app, restoreEnv } = await bootFreshApp({
      NODE_ENV: 'production',
      JWT_SECRET: 'production-transport-test-secret-of-32-bytes',
      OAUTH_ISSUER: 'https://api.example.com',
      TRUST_PROXY: 'loopback',
    }));
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it.each(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])(
    '%s with X-Forwarded-Proto: http → 400 ErrorResp, no redirect, HSTS',
    async (method) => {
      const res = await request(app.getHttpServer())[method.toLowerCase() as 'get']('/v1/users').set('X-Forwarded-Proto', 'http');
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['strict-transport-security']).toBe(HSTS);
      if (method !== 'HEAD') {
        expect(res.body).toEqual({
          error: 'plain HTTP is not accepted: send the request over https://',
          code: 'bad_request',
          request_id: res.headers['x-request-id'],
        });
      }
    },
  );

  it('also on operational paths: /health/ready with X-Forwarded-Proto: http → 400', async () => {
    const res = await api().get('/health/ready').set('X-Forwarded-Proto', 'http');
    expect(res.status).toBe(400);
  });

  it('X-Forwarded-Proto: https → served, with HSTS (max-age one year, includeSubDomains)', async () => {
    const created = await api().post('/v1/users').set('X-Forwarded-Proto', 'https').send(REGISTRATION);
    expect(created.status).toBe(201);
    expect(created.headers['strict-transport-security']).toBe(HSTS);
    const missing = await api().get('/v1/nothing').set('X-Forwarded-Proto', 'https');
    expect(missing.status).toBe(404);
    expect(missing.headers['strict-transport-security']).toBe(HSTS);
  });

  it('a direct request without X-Forwarded-Proto (a load balancer health check) is served, with HSTS', async () => {
    const res = await api().get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.headers['strict-transport-security']).toBe(HSTS);
  });
});

describe('production without TRUST_PROXY: X-Forwarded-Proto from an untrusted peer is ignored', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;

  beforeAll(async () => {
    ({ app, restoreEnv } = await bootFreshApp({
      NODE_ENV: 'production',
      JWT_SECRET: 'production-transport-test-secret-of-32-bytes',
      OAUTH_ISSUER: 'https://api.example.com',
      TRUST_PROXY: undefined,
      HSTS_MAX_AGE: '63072000',
    }));
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('GET /health/live with X-Forwarded-Proto: http → 200, HSTS with HSTS_MAX_AGE', async () => {
    const res = await request(app.getHttpServer()).get('/health/live').set('X-Forwarded-Proto', 'http');
    expect(res.status).toBe(200);
    expect(res.headers['strict-transport-security']).toBe('max-age=63072000; includeSubDomains');
  });
});
