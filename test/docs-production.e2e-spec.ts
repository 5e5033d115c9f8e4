import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { SwaggerModule } from '@nestjs/swagger';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { bootFreshApp, loadFreshApp } from './setup/fresh-app.js';
import { errorBody } from './setup/error-body.js';

const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: 'production-docs-test-secret-of-at-least-32-bytes', OAUTH_ISSUER: 'https://api.example.com' };
const DOCS_USERNAME = 'docs-reader';
/** With a colon: HTTP Basic splits user and password at the first one only. */
const DOCS_PASSWORD = 'open:sesame-4-docs';

/** Everything the docs setup serves: the page, its assets (the init script embeds the document), the document. */
const DOCS_PATHS = [
  '/docs',
  '/docs/',
  '/docs/swagger-ui-init.js',
  '/docs/swagger-ui.css',
  '/docs/openapi.json',
  '/docs/openapi.yaml',
  '/docs/v1/openapi.json',
  '/docs/v2/openapi.yaml',
];

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/** The successful answers of the docs paths, whoever serves them. */
function expectDocsServed(res: request.Response, path: string): void {
  expect({ path, status: res.status }).toEqual({ path, status: 200 });
  if (path === '/docs' || path === '/docs/') {
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('resource-api docs');
  }
  if (path === '/docs/openapi.json' || path === '/docs/v1/openapi.json') {
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.openapi).toMatch(/^3\.0\.\d+$/);
    // the newest version at /docs/openapi.json, each version at /docs/v<n>/openapi.json
    expect(res.body.paths).toHaveProperty([path === '/docs/openapi.json' ? '/v2/articles' : '/v1/articles']);
  }
  if (path === '/docs/openapi.yaml' || path === '/docs/v2/openapi.yaml') {
    expect(res.headers['content-type']).toMatch(/yaml/);
    expect(res.text).toMatch(/^openapi: 3\.0\.\d+$/m);
  }
}

describe('docs in production without DOCS_USERNAME/DOCS_PASSWORD (docs/operations.md#documentation-endpoints: off)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    ({ app, restoreEnv } = await bootFreshApp({ ...PRODUCTION, DOCS_USERNAME: undefined, DOCS_PASSWORD: undefined }));
    // a fresh copy of the application is loaded and compiled again: slow on a busy machine
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it.each(DOCS_PATHS)('GET %s → 404 with ErrorResp, even with Basic credentials', async (path) => {
    for (const attempt of [api().get(path), api().get(path).set('Authorization', basic(DOCS_USERNAME, DOCS_PASSWORD))]) {
      const res = await attempt;
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(errorBody('not_found'));
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.body.error).toBe(`no route for ${path}`); // like any unknown path: nothing tells the docs exist
    }
  });

  it('GET / names no docs page, no document and no metrics (production without METRICS_TOKEN: /metrics does not exist)', async () => {
    const root = await api().get('/');
    expect(root.status).toBe(200);
    expect(root.body.links).toEqual([
      { rel: 'self', href: '/' },
      { rel: 'health-live', href: '/health/live' },
      { rel: 'health-ready', href: '/health/ready' },
    ]);
    expect(root.body.versions.map((version: { document: unknown }) => version.document)).toEqual([null, null]);
    expect(root.text).not.toContain(PRODUCTION.JWT_SECRET);
  });

  it('still serves the API', async () => {
    const res = await api().get('/v1/articles');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  });
});

describe('docs in production with DOCS_USERNAME/DOCS_PASSWORD (docs/operations.md#documentation-endpoints: behind HTTP Basic auth)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    ({ app, restoreEnv } = await bootFreshApp({ ...PRODUCTION, DOCS_USERNAME, DOCS_PASSWORD }));
    // a fresh copy of the application is loaded and compiled again: slow on a busy machine
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  const refusals: [string, string | undefined][] = [
    ['no credentials', undefined],
    ['a wrong password', basic(DOCS_USERNAME, 'open:sesame-4-doc')],
    ['a wrong username', basic('docs-readers', DOCS_PASSWORD)],
    ['the password only', basic('', DOCS_PASSWORD)],
    ['credentials without the Basic scheme', Buffer.from(`${DOCS_USERNAME}:${DOCS_PASSWORD}`).toString('base64')],
    ['a bearer token', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig'],
    ['a malformed Basic value', 'Basic %%%'],
  ];

  it.each(refusals)('with %s: every docs path → 401 with WWW-Authenticate: Basic and ErrorResp', async (_, authorization) => {
    for (const path of DOCS_PATHS) {
      const req = api().get(path);
      const res = await (authorization === undefined ? req : req.set('Authorization', authorization));
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="[^"]+"/);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
      expect(res.text).not.toMatch(/swagger|openapi/i);
    }
  });

  it.each(DOCS_PATHS)('GET %s with the right Basic credentials → 200', async (path) => {
    const res = await api().get(path).set('Authorization', basic(DOCS_USERNAME, DOCS_PASSWORD));
    expectDocsServed(res, path);
  });

  it("serves no unprotected copy: Nest's default /docs-json and /docs-yaml are 404, another letter case is still 401", async () => {
    for (const path of ['/docs-json', '/docs-yaml']) {
      const res = await api().get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body).toEqual(errorBody('not_found'));
    }
    for (const path of ['/DOCS/openapi.json', '/Docs']) {
      const res = await api().get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    }
  });

  it('GET / links the docs page and the documents (behind the same Basic auth), never the credentials', async () => {
    const root = await api().get('/');
    expect(root.status).toBe(200);
    expect(root.body.links).toEqual(
      expect.arrayContaining([
        { rel: 'service-doc', href: '/docs' },
        { rel: 'service-desc', href: '/docs/openapi.json' },
      ]),
    );
    expect(root.body.versions.map((version: { document: unknown }) => version.document)).toEqual(['/docs/v2/openapi.json', '/docs/v1/openapi.json']);
    expect(root.text).not.toContain(DOCS_PASSWORD);
    expect(root.text).not.toContain(DOCS_USERNAME);
    expect((await api().get('/docs/v1/openapi.json').set('Authorization', basic(DOCS_USERNAME, DOCS_PASSWORD))).status).toBe(200);
  });

  it('keeps Basic auth to the docs: the API still answers with its own Bearer challenge', async () => {
    const res = await api().get('/v1/articles').set('Authorization', basic(DOCS_USERNAME, DOCS_PASSWORD));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  });
});

describe('docs in development (docs/operations.md#documentation-endpoints: served without authentication)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    // DOCS_* only matter in production
    ({ app, restoreEnv } = await bootFreshApp({ NODE_ENV: 'development', DOCS_USERNAME, DOCS_PASSWORD }));
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it.each(DOCS_PATHS)('GET %s → 200 without credentials', async (path) => {
    const res = await api().get(path);
    expectDocsServed(res, path);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});

describe('docs documents generated at the first docs request, not at start-up (docs/operations.md#documentation-endpoints)', () => {
  let app: NestExpressApplication;
  let createDocument: jest.Spied<typeof SwaggerModule.createDocument>;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    // built as main.ts builds it (createTestApp builds the documents itself, to validate responses against them),
    // from one fresh copy of the modules (the describes above loaded others); the test environment serves the docs as development does
    await loadFreshApp({});
    const { SwaggerModule } = await import('@nestjs/swagger');
    const { createApp } = await import('../src/app.setup.js');
    const { validateEnv } = await import('../src/config/env.validation.js');
    createDocument = jest.spyOn(SwaggerModule, 'createDocument');
    app = await createApp(validateEnv(process.env));
    await app.init();
  });
  afterAll(async () => {
    createDocument?.mockRestore();
    await app?.close();
  });

  it('generates none while starting and serving the API, both versions once at the first docs request, then serves the kept ones', async () => {
    expect(createDocument).not.toHaveBeenCalled();
    const ready = await api().get('/health/ready');
    expect(ready.status).toBe(200);
    expect(createDocument).not.toHaveBeenCalled();
    const first = await api().get('/docs/v2/openapi.yaml');
    expectDocsServed(first, '/docs/v2/openapi.yaml');
    expect(createDocument).toHaveBeenCalledTimes(1);
    for (const path of DOCS_PATHS) expectDocsServed(await api().get(path), path);
    expect(createDocument).toHaveBeenCalledTimes(1);
  });
});
