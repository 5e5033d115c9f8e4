import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/** The root (docs/versioning.md#the-root): `GET /` tells a caller who knows only the host where everything is. */
describe('GET / (the root)', () => {
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('lists the versions newest first, v1’s deprecated paths with its dates, the documents, the docs page, health and metrics — public, cached for 5 minutes', async () => {
    const res = await api().get('/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.body).toEqual({
      name: 'resource-api',
      versions: [
        { version: '2', href: '/v2', newest: true, document: '/docs/v2/openapi.json' },
        {
          version: '1',
          href: '/v1',
          newest: false,
          document: '/docs/v1/openapi.json',
          // the defaults of V1_DEPRECATED_AT and V1_SUNSET_AT
          deprecation: {
            deprecated_at: '2026-12-01T00:00:00.000Z',
            sunset_at: '2027-06-30T00:00:00.000Z',
            paths: ['/v1/articles', '/v1/articles/{id}/comments'],
          },
        },
      ],
      links: [
        { rel: 'self', href: '/' },
        { rel: 'service-doc', href: '/docs' },
        { rel: 'service-desc', href: '/docs/openapi.json' },
        { rel: 'health-live', href: '/health/live' },
        { rel: 'health-ready', href: '/health/ready' },
        { rel: 'metrics', href: '/metrics' },
      ],
    });
  });

  it('says what the service does: every link answers 200, each version’s document is that version’s, a deprecated path answers with the dates listed', async () => {
    const root = (await api().get('/')).body as {
      versions: Array<{ version: string; document: string; deprecation?: { sunset_at: string; paths: string[] } }>;
      links: Array<{ href: string }>;
    };
    for (const { href } of root.links) expect({ href, status: (await api().get(href)).status }).toEqual({ href, status: 200 });
    for (const { version, document, deprecation } of root.versions) {
      const doc = await api().get(document);
      expect(doc.status).toBe(200);
      expect(Object.keys(doc.body.paths).some((path) => path.startsWith(`/v${version}/`))).toBe(true);
      for (const path of deprecation?.paths ?? []) {
        const answered = await api().get(path.replace('{id}', '1'));
        expect(answered.headers.sunset).toBe(new Date(deprecation!.sunset_at).toUTCString());
      }
    }
    const deprecatedPaths = root.versions.flatMap((version) => version.deprecation?.paths ?? []);
    const v1 = (await api().get('/docs/v1/openapi.json')).body as { paths: Record<string, { get?: { deprecated?: boolean } }> };
    expect(deprecatedPaths.every((path) => v1.paths[path]?.get?.deprecated === true)).toBe(true);
  });

  it('is unversioned: a vendor Accept type changes nothing and the answer does not vary by Accept; HEAD answers, other methods 405, a query parameter 400', async () => {
    const plain = await api().get('/');
    const vendor = await api().get('/').set('Accept', 'application/vnd.resource-api.v2+json');
    expect(vendor.status).toBe(200);
    expect(vendor.body).toEqual(plain.body);
    expect(plain.headers.vary ?? '').not.toMatch(/accept/i);
    expect((await api().head('/')).status).toBe(200);
    const post = await api().post('/').send({});
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.body).toEqual(errorBody('method_not_allowed'));
    const unknown = await api().get('/?x=1');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ ...errorBody('bad_request'), details: [{ field: 'x', message: 'unknown query parameter x' }] });
  });
});
