import { describe, expect, it } from '@jest/globals';
// upward on purpose, in a test only: the links of a real resource mapper follow the served version
import { toTodoResponse } from '../../todos/todo.response.js';
import { inVersion, linkPrefix, serveAsVersion, versionOfPath } from './api-versions.js';
import { deprecationHeaders } from './deprecation.js';
import { negotiateVersion, subdomainVersion, vendorVersions } from './version-negotiation.js';

const V = (n: number | string) => `application/vnd.resource-api.v${n}+json`;
const BASE = 'api.example.com';

describe('vendorVersions (Accept)', () => {
  it('reads the versions of vendor types, best q first, ignoring other ranges and q=0', () => {
    expect(vendorVersions(undefined)).toEqual([]);
    expect(vendorVersions('application/json, */*')).toEqual([]);
    expect(vendorVersions(V(2))).toEqual(['2']);
    expect(vendorVersions(`${V(1)};q=0.4, text/html, ${V(2)};q=0.9`)).toEqual(['2', '1']);
    expect(vendorVersions(`${V(2)};q=0, ${V(1)}`)).toEqual(['1']);
    expect(vendorVersions('APPLICATION/VND.RESOURCE-API.V02+JSON')).toEqual(['2']);
    expect(vendorVersions('application/vnd.other-api.v2+json, application/json;v=2')).toEqual([]);
  });
});

describe('subdomainVersion (Host)', () => {
  it('reads v<n>.<base host>, and nothing else', () => {
    expect(subdomainVersion(`v2.${BASE}`, BASE)).toBe('2');
    expect(subdomainVersion(`V1.API.EXAMPLE.COM`, BASE)).toBe('1');
    expect(subdomainVersion(BASE, BASE)).toBeUndefined();
    expect(subdomainVersion(`www.${BASE}`, BASE)).toBeUndefined();
    expect(subdomainVersion(`x.v2.${BASE}`, BASE)).toBeUndefined();
    expect(subdomainVersion(`v2.${BASE}.evil.org`, BASE)).toBeUndefined();
    expect(subdomainVersion(`v2.${BASE}`, undefined)).toBeUndefined();
  });
});

describe('negotiateVersion', () => {
  it('routes prefixed paths by their prefix; an agreeing header or host is fine', () => {
    expect(negotiateVersion({ path: '/v1/articles' })).toEqual({ kind: 'pass', vary: false });
    expect(negotiateVersion({ path: '/v2/articles', accept: `${V(2)}, application/json` })).toEqual({ kind: 'pass', vary: false });
    expect(negotiateVersion({ path: '/v2/articles', hostname: `v2.${BASE}`, baseHost: BASE })).toEqual({ kind: 'pass', vary: false });
  });

  it('refuses a prefix that disagrees with the header or the host with 400', () => {
    expect(negotiateVersion({ path: '/v2/articles', accept: V(1) })).toMatchObject({ kind: 'error', status: 400 });
    expect(negotiateVersion({ path: '/v1/articles', accept: V(7) })).toMatchObject({ kind: 'error', status: 400 });
    expect(negotiateVersion({ path: '/v1/articles', hostname: `v2.${BASE}`, baseHost: BASE })).toMatchObject({ kind: 'error', status: 400 });
  });

  it('rewrites unprefixed paths to the version Accept or the subdomain names, varying by Accept', () => {
    expect(negotiateVersion({ path: '/articles/1', accept: V(2) })).toEqual({ kind: 'rewrite', version: '2', via: 'accept', vary: true });
    expect(negotiateVersion({ path: '/articles', accept: `${V(9)}, ${V(1)}` })).toEqual({ kind: 'rewrite', version: '1', via: 'accept', vary: true });
    expect(negotiateVersion({ path: '/todos', hostname: `v1.${BASE}`, baseHost: BASE })).toEqual({ kind: 'rewrite', version: '1', via: 'host', vary: true });
    expect(negotiateVersion({ path: '/todos', accept: V(2), hostname: `v2.${BASE}`, baseHost: BASE })).toEqual({
      kind: 'rewrite',
      version: '2',
      via: 'accept',
      vary: true,
    });
  });

  it('406 for vendor types of unknown versions only, 404 for an unknown version subdomain, 400 when Accept and host disagree', () => {
    expect(negotiateVersion({ path: '/articles', accept: V(3) })).toMatchObject({ kind: 'error', status: 406, message: expect.stringContaining('v3') });
    expect(negotiateVersion({ path: '/articles', hostname: `v3.${BASE}`, baseHost: BASE })).toMatchObject({ kind: 'error', status: 404 });
    expect(negotiateVersion({ path: '/articles', accept: V(1), hostname: `v2.${BASE}`, baseHost: BASE })).toMatchObject({ kind: 'error', status: 400 });
  });

  it('leaves an unprefixed path without a version alone (an unknown route), varying by Accept', () => {
    expect(negotiateVersion({ path: '/articles', accept: 'application/json' })).toEqual({ kind: 'pass', vary: true });
  });

  it('never versions the operational paths', () => {
    for (const path of ['/health/live', '/docs', '/docs/openapi.json', '/.well-known/jwks.json']) {
      expect(negotiateVersion({ path, accept: V(3), hostname: `v9.${BASE}`, baseHost: BASE })).toEqual({ kind: 'pass', vary: false });
    }
  });
});

describe('versionOfPath and the served link prefix', () => {
  it('reads the prefix', () => {
    expect(versionOfPath('/v2/articles')).toBe('2');
    expect(versionOfPath('/v10')).toBe('10');
    expect(versionOfPath('/articles')).toBeUndefined();
    expect(versionOfPath('/vx/articles')).toBeUndefined();
    expect(versionOfPath('/v1articles')).toBeUndefined();
  });

  it('writes links into the served version: /v1 outside a request, the version a handler is served as, across awaits', async () => {
    expect(linkPrefix()).toBe('/v1');
    const served = await serveAsVersion('2', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return toTodoResponse({ id: 3, title: 't', content: null, status: 'done', owner_id: 5, created_at: new Date(0), updated_at: new Date(0) }).links;
    });
    expect(served).toEqual([
      { rel: 'self', href: '/v2/todos/3' },
      { rel: 'owner', href: '/v2/users/5' },
    ]);
    expect(await Promise.all(['1', '2'].map((version) => serveAsVersion(version, async () => linkPrefix())))).toEqual(['/v1', '/v2']);
    expect(linkPrefix()).toBe('/v1');
  });
});

describe('deprecationHeaders (RFC 9745, RFC 8594)', () => {
  it('says when as @<unix seconds> and an HTTP-date, and links the successor and the docs', () => {
    const headers = deprecationHeaders('/v1/articles/7/comments', {
      deprecatedAt: new Date('2026-12-01T00:00:00Z'),
      sunsetAt: new Date('2027-06-30T00:00:00Z'),
    });
    expect(headers).toEqual({
      Deprecation: '@1796083200',
      Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      Link: '</v2/articles/7/comments>; rel="successor-version", </docs>; rel="deprecation"; type="text/html"',
    });
  });

  it.each([
    ['a 10,000-character id', `/v1/articles/${'x'.repeat(10_000)}`],
    ['a percent-encoded id', '/v1/articles/%ED%A0%80/comments'],
    ['an id with a quote', "/v1/articles/1'--"],
  ])('links the collection, not the path, for %s (the header stays within its documented 2048 characters)', (_name, path) => {
    const headers = deprecationHeaders(path, { deprecatedAt: new Date('2026-12-01T00:00:00Z'), sunsetAt: new Date('2027-06-30T00:00:00Z') });
    expect(headers.Link).toBe('</v2/articles>; rel="successor-version", </docs>; rel="deprecation"; type="text/html"');
  });
});

describe('inVersion (the OpenAPI texts of one version)', () => {
  it('resolves every /v{version}/ placeholder to the version prefix and leaves other text alone', () => {
    expect(inVersion('`POST /v{version}/login`, then `GET /v{version}/todos/1`', '2')).toBe('`POST /v2/login`, then `GET /v2/todos/1`');
    expect(inVersion('/v{version}/todos?owner=1', '1')).toBe('/v1/todos?owner=1');
    expect(inVersion('https://api.example.com/v1/oauth/token', '2')).toBe('https://api.example.com/v1/oauth/token');
    expect(inVersion('/v{version}', '2')).toBe('/v{version}');
  });
});
