import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { bearer, type CreatedUser } from './factories/user.factory.js';
import { type FreshApp, loadFreshApp } from './setup/fresh-app.js';
import { errorBody } from './setup/error-body.js';

/**
 * docs/versioning.md#what-changed-in-v2: `/v2` with one breaking change (the embedded `author` of
 * articles and comments), every other resource unchanged under `/v2`; `/v1` working unchanged with
 * its articles and comments deprecated (`Deprecation`, `Sunset`, `Link` from V1_DEPRECATED_AT and
 * V1_SUNSET_AT); the `Accept` vendor type and the version subdomain as alternatives to the path
 * prefix; one OpenAPI document per version. Every response is also checked against the document
 * of its version (test/setup/openapi-validation.ts).
 */

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DEPRECATED_AT = '2026-12-01T12:00:00Z';
const SUNSET_AT = '2027-06-30';
const BASE_HOST = 'api.example.com';
const V1 = 'application/vnd.resource-api.v1+json';
const V2 = 'application/vnd.resource-api.v2+json';

/** What every response of a deprecated v1 operation for `path` carries. */
const deprecationHeaders = (successor: string) => ({
  deprecation: `@${Date.UTC(2026, 11, 1, 12) / 1000}`,
  sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
  link: `<${successor}>; rel="successor-version", </docs>; rel="deprecation"; type="text/html"`,
});

/** A document without its root operation (`GET /`, which lists every version and so names the other versions' paths). */
const withoutRoot = (doc: { paths: Record<string, unknown> }) => ({
  ...doc,
  paths: Object.fromEntries(Object.entries(doc.paths).filter(([path]) => path !== '/')),
});

describe('API versions (docs/versioning.md)', () => {
  let fresh: FreshApp & { restoreEnv: () => void };
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let articleId: number;
  let commentId: number;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    // the dates and the base host come from the configuration: a fresh application with our own
    fresh = await loadFreshApp({ V1_DEPRECATED_AT: DEPRECATED_AT, V1_SUNSET_AT: SUNSET_AT, API_BASE_HOST: BASE_HOST });
    app = await fresh.createTestApp();
    alice = await fresh.createUser(app, { username: 'alice_v', name: 'Alice Writer' });
    bob = await fresh.createUser(app, { username: 'bob_v', name: 'Bob Reader' });
    const created = await http()
      .post('/v1/articles')
      .set('Authorization', bearer(alice.token))
      .send({ title: 'Versioned', body: 'One source, two shapes.', status: 'published' });
    expect(created.status).toBe(201);
    articleId = created.body.id;
    const comment = await http().post(`/v1/articles/${articleId}/comments`).set('Authorization', bearer(bob.token)).send({ body: 'Seen in both versions.' });
    expect(comment.status).toBe(201);
    commentId = comment.body.id;
  });

  afterAll(async () => {
    await app?.close();
    fresh?.restoreEnv();
  });

  describe('the same article through /v1 and /v2', () => {
    it('v1: author is the integer id, links point into v1, and the response is deprecated with the configured dates', async () => {
      const res = await http().get(`/v1/articles/${articleId}`).set('Authorization', bearer(bob.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: articleId, title: 'Versioned', author: alice.user.id });
      expect(res.body.links).toEqual([
        { rel: 'self', href: `/v1/articles/${articleId}` },
        { rel: 'author', href: `/v1/users/${alice.user.id}` },
        { rel: 'comments', href: `/v1/articles/${articleId}/comments` },
      ]);
      expect(res.headers).toMatchObject(deprecationHeaders(`/v2/articles/${articleId}`));
    });

    it('v2: author is the embedded {id, username, name}, links point into v2, no deprecation headers', async () => {
      const res = await http().get(`/v2/articles/${articleId}`).set('Authorization', bearer(bob.token));
      expect(res.status).toBe(200);
      const v1 = await http().get(`/v1/articles/${articleId}`).set('Authorization', bearer(bob.token));
      const { author, links, ...rest } = res.body;
      const { author: _v1Author, links: _v1Links, ...v1Rest } = v1.body;
      expect(rest).toEqual(v1Rest); // nothing else differs
      expect(author).toEqual({ id: alice.user.id, username: 'alice_v', name: 'Alice Writer' });
      expect(links).toEqual([
        { rel: 'self', href: `/v2/articles/${articleId}` },
        { rel: 'author', href: `/v2/users/${alice.user.id}` },
        { rel: 'comments', href: `/v2/articles/${articleId}/comments` },
      ]);
      for (const name of ['deprecation', 'sunset', 'link']) expect(res.headers).not.toHaveProperty([name]);
    });

    it('lists: v1 envelope with integer authors and Link to /v2/articles; v2 with embedded authors and v2 paging links; the author filter takes an id in both', async () => {
      const v1 = await http().get(`/v1/articles?author=${alice.user.id}`).set('Authorization', bearer(bob.token));
      expect(v1.status).toBe(200);
      expect(v1.body.data.map((a: { author: unknown }) => a.author)).toEqual([alice.user.id]);
      expect(v1.headers).toMatchObject(deprecationHeaders('/v2/articles'));
      expect(v1.headers.link).toContain('</v2/articles>; rel="successor-version"');

      const v2 = await http().get(`/v2/articles?author=${alice.user.id}&size=5`).set('Authorization', bearer(bob.token));
      expect(v2.status).toBe(200);
      expect(v2.body.data.map((a: { author: unknown }) => a.author)).toEqual([{ id: alice.user.id, username: 'alice_v', name: 'Alice Writer' }]);
      expect(v2.body.links).toContainEqual({ rel: 'self', href: `/v2/articles?author=${alice.user.id}&page=1&size=5` });
      expect(v2.headers).not.toHaveProperty(['deprecation']);
      const none = await http().get(`/v2/articles?author=${bob.user.id}`).set('Authorization', bearer(bob.token));
      expect(none.body).toMatchObject({ data: [], total: 0 });
      const bad = await http().get('/v2/articles?author=alice_v').set('Authorization', bearer(bob.token));
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject(errorBody('bad_request'));
    });

    it('v2 writes share v1 behaviour: 201 with Location /v2/…, the same 409 and 422, `fields` keeps the embedded author', async () => {
      const created = await http().post('/v2/articles').set('Authorization', bearer(bob.token)).send({ title: 'Written in v2' });
      expect(created.status).toBe(201);
      expect(created.headers.location).toBe(`/v2/articles/${created.body.id}`);
      expect(created.body.author).toEqual({ id: bob.user.id, username: 'bob_v', name: 'Bob Reader' });
      const archived = await http().patch(`/v2/articles/${created.body.id}`).set('Authorization', bearer(bob.token)).send({ status: 'archived' });
      expect(archived.status).toBe(200);
      expect(archived.body.author.id).toBe(bob.user.id);
      const refused = await http().patch(`/v2/articles/${created.body.id}`).set('Authorization', bearer(bob.token)).send({ status: 'draft' });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual(errorBody('conflict', 'cannot change status from archived to draft'));
      const unknownTag = await http()
        .put(`/v2/articles/${created.body.id}`)
        .set('Authorization', bearer(bob.token))
        .send({ title: 'x', status: 'archived', tags: ['nope'] });
      expect(unknownTag.status).toBe(422);
      const picked = await http().get(`/v2/articles/${articleId}?fields=title,author`).set('Authorization', bearer(bob.token));
      expect(picked.status).toBe(200);
      expect(Object.keys(picked.body).sort()).toEqual(['author', 'id', 'links', 'title']);
      expect(picked.body.author).toEqual({ id: alice.user.id, username: 'alice_v', name: 'Alice Writer' });
      const forbidden = await http().delete(`/v2/articles/${articleId}`).set('Authorization', bearer(bob.token));
      expect(forbidden.status).toBe(403);
      const deleted = await http().delete(`/v2/articles/${created.body.id}`).set('Authorization', bearer(bob.token));
      expect(deleted.status).toBe(204);
      expect((await http().get(`/v1/articles/${created.body.id}`).set('Authorization', bearer(bob.token))).status).toBe(404);
    });

    it('comments: integer author under /v1 (deprecated, successor the same comment under /v2), embedded under /v2', async () => {
      const v1 = await http().get(`/v1/articles/${articleId}/comments/${commentId}`).set('Authorization', bearer(alice.token));
      expect(v1.status).toBe(200);
      expect(v1.body).toMatchObject({ id: commentId, article: articleId, author: bob.user.id });
      expect(v1.headers).toMatchObject(deprecationHeaders(`/v2/articles/${articleId}/comments/${commentId}`));

      const v2 = await http().get(`/v2/articles/${articleId}/comments`).set('Authorization', bearer(alice.token));
      expect(v2.status).toBe(200);
      expect(v2.body.data).toEqual([
        expect.objectContaining({
          id: commentId,
          article: articleId,
          author: { id: bob.user.id, username: 'bob_v', name: 'Bob Reader' },
          links: [
            { rel: 'self', href: `/v2/articles/${articleId}/comments/${commentId}` },
            { rel: 'article', href: `/v2/articles/${articleId}` },
            { rel: 'author', href: `/v2/users/${bob.user.id}` },
          ],
        }),
      ]);
      expect(v2.headers).not.toHaveProperty(['deprecation']);
      const created = await http().post(`/v2/articles/${articleId}/comments`).set('Authorization', bearer(alice.token)).send({ body: 'From v2.' });
      expect(created.status).toBe(201);
      expect(created.headers.location).toBe(`/v2/articles/${articleId}/comments/${created.body.id}`);
      expect(created.body.author).toEqual({ id: alice.user.id, username: 'alice_v', name: 'Alice Writer' });
    });

    it('v1 errors of the deprecated operations carry the deprecation headers too (401, 400, 404, 415)', async () => {
      const responses = [
        [await http().get('/v1/articles'), '/v2/articles', 401],
        [await http().get('/v1/articles/abc').set('Authorization', bearer(bob.token)), '/v2/articles/abc', 400],
        [await http().get('/v1/articles/999999').set('Authorization', bearer(bob.token)), '/v2/articles/999999', 404],
        [await http().post('/v1/articles').set('Authorization', bearer(bob.token)).set('Content-Type', 'text/plain').send('hello'), '/v2/articles', 415],
        [
          await http().get(`/v1/articles/${articleId}/comments/999999`).set('Authorization', bearer(bob.token)),
          `/v2/articles/${articleId}/comments/999999`,
          404,
        ],
      ] as const;
      for (const [res, successor, status] of responses) {
        expect({ status: res.status, headers: res.headers }).toMatchObject({ status, headers: deprecationHeaders(successor) });
        expect(res.body).toMatchObject(errorBody(expect.any(String) as unknown as string));
      }
    });

    it('every other resource is served unchanged under /v2, not deprecated under /v1', async () => {
      const v1 = await http().post('/v1/todos').set('Authorization', bearer(bob.token)).send({ title: 'both versions' });
      expect(v1.status).toBe(201);
      expect(v1.headers).not.toHaveProperty(['deprecation']);
      const v2 = await http().get(`/v2/todos/${v1.body.id}`).set('Authorization', bearer(bob.token));
      expect(v2.status).toBe(200);
      const { links, ...rest } = v2.body;
      const { links: v1Links, ...v1Rest } = v1.body;
      expect(rest).toEqual(v1Rest);
      expect(v1Links).toEqual([
        { rel: 'self', href: `/v1/todos/${v1.body.id}` },
        { rel: 'owner', href: `/v1/users/${bob.user.id}` },
      ]);
      expect(links).toEqual([
        { rel: 'self', href: `/v2/todos/${v1.body.id}` },
        { rel: 'owner', href: `/v2/users/${bob.user.id}` },
      ]);
      const created = await http().post('/v2/todos').set('Authorization', bearer(bob.token)).send({ title: 'made in v2' });
      expect(created.headers.location).toBe(`/v2/todos/${created.body.id}`);
      const me = await http().get(`/v2/users/${bob.user.id}`).set('Authorization', bearer(bob.token));
      expect(me.body).toMatchObject({
        id: bob.user.id,
        username: 'bob_v',
        links: [
          { rel: 'self', href: `/v2/users/${bob.user.id}` },
          { rel: 'todos', href: `/v2/todos?owner=${bob.user.id}` },
        ],
      });
      const tags = await http().get('/v2/tags').set('Authorization', bearer(bob.token));
      expect(tags.status).toBe(200);
      const login = await http().post('/v2/login').send({ username: 'bob_v', password: 'password-123' });
      expect(login.status).toBe(200);
      expect(login.body.token_type).toBe('Bearer');
    });

    it('unknown routes stay 404 and known paths 405 with Allow under /v2; an unknown version prefix is 404', async () => {
      const notAllowed = await http().put('/v2/articles').set('Authorization', bearer(bob.token)).send({});
      expect(notAllowed.status).toBe(405);
      expect(notAllowed.headers.allow).toBe('GET, HEAD, POST');
      expect(notAllowed.body).toEqual(errorBody('method_not_allowed'));
      for (const url of ['/v2/nowhere', '/v3/articles', '/v1/v1/articles']) {
        const res = await http().get(url).set('Authorization', bearer(bob.token));
        expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 404, body: errorBody('not_found') });
      }
    });

    it('operational paths stay unversioned: /.well-known, /docs (never under /v1 or /v2)', async () => {
      expect((await http().get('/.well-known/jwks.json')).status).toBe(200);
      expect((await http().get('/.well-known/jwks.json').set('Accept', V2)).status).toBe(200);
      for (const url of ['/v1/.well-known/jwks.json', '/v2/.well-known/jwks.json', '/v2/docs/openapi.json']) {
        expect({ url, status: (await http().get(url)).status }).toEqual({ url, status: 404 });
      }
    });
  });

  describe('Accept: application/vnd.resource-api.v<n>+json on an unprefixed path (docs/versioning.md#choosing-the-version)', () => {
    it('v2 selects v2: the same body as /v2, Vary: Accept, canonical /v2 links', async () => {
      const res = await http().get(`/articles/${articleId}`).set('Authorization', bearer(bob.token)).set('Accept', V2);
      expect(res.status).toBe(200);
      const canonical = await http().get(`/v2/articles/${articleId}`).set('Authorization', bearer(bob.token));
      expect(res.body).toEqual(canonical.body);
      expect(res.headers.vary).toMatch(/\bAccept\b/);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers).not.toHaveProperty(['deprecation']);
    });

    it('v1 selects v1, with the deprecation headers', async () => {
      const res = await http().get(`/articles/${articleId}`).set('Authorization', bearer(bob.token)).set('Accept', V1);
      expect(res.status).toBe(200);
      expect(res.body.author).toBe(alice.user.id);
      expect(res.headers.vary).toMatch(/\bAccept\b/);
      expect(res.headers).toMatchObject(deprecationHeaders(`/v2/articles/${articleId}`));
    });

    it('list links and Location use the canonical path prefix of the version served', async () => {
      const list = await http().get('/articles?size=1').set('Authorization', bearer(bob.token)).set('Accept', V2);
      expect(list.status).toBe(200);
      expect(list.body.links[0]).toEqual({ rel: 'self', href: '/v2/articles?page=1&size=1' });
      expect(list.body.data[0].author).toEqual(expect.objectContaining({ username: expect.any(String) }));
      const created = await http().post('/todos').set('Authorization', bearer(bob.token)).set('Accept', V2).send({ title: 'via Accept' });
      expect(created.status).toBe(201);
      expect(created.headers.location).toBe(`/v2/todos/${created.body.id}`);
      expect(created.body.links[0]).toEqual({ rel: 'self', href: `/v2/todos/${created.body.id}` });
    });

    it('picks the best-rated known version and ignores other media ranges and q=0', async () => {
      const preferred = await http()
        .get(`/articles/${articleId}`)
        .set('Authorization', bearer(bob.token))
        .set('Accept', `${V1};q=0.5, ${V2}, application/json;q=0.1`);
      expect(preferred.body.author).toEqual(expect.objectContaining({ id: alice.user.id }));
      const refused = await http().get(`/articles/${articleId}`).set('Authorization', bearer(bob.token)).set('Accept', `${V2};q=0, ${V1}`);
      expect(refused.body.author).toBe(alice.user.id);
      const mixed = await http()
        .get(`/articles/${articleId}`)
        .set('Authorization', bearer(bob.token))
        .set('Accept', `application/vnd.resource-api.v9+json, ${V2}`);
      expect(mixed.status).toBe(200);
    });

    it('a vendor type naming only unknown versions → 406 with ErrorResp', async () => {
      const res = await http().get(`/articles/${articleId}`).set('Authorization', bearer(bob.token)).set('Accept', 'application/vnd.resource-api.v3+json');
      expect(res.status).toBe(406);
      expect(res.body).toEqual(errorBody('not_acceptable', expect.stringContaining('v3')));
      expect(res.headers['x-request-id']).toBe(res.body.request_id);
    });

    it('a prefix and a header that disagree → 400 with ErrorResp; agreeing is fine', async () => {
      for (const [url, accept] of [
        [`/v2/articles/${articleId}`, V1],
        ['/v1/todos', V2],
        ['/v2/todos', 'application/vnd.resource-api.v3+json'],
      ]) {
        const res = await http().get(url).set('Authorization', bearer(bob.token)).set('Accept', accept);
        expect({ url, accept, status: res.status, body: res.body }).toEqual({
          url,
          accept,
          status: 400,
          body: errorBody('bad_request', expect.stringMatching(/disagree|asks for/)),
        });
      }
      const agreeing = await http().get(`/v2/articles/${articleId}`).set('Authorization', bearer(bob.token)).set('Accept', `${V2}, application/json`);
      expect(agreeing.status).toBe(200);
    });

    it('without a version an unprefixed path is an unknown route (404), still Vary: Accept', async () => {
      const res = await http().get('/articles').set('Authorization', bearer(bob.token));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody('not_found'));
      expect(res.headers.vary).toMatch(/\bAccept\b/);
    });
  });

  describe(`version subdomain v<n>.${BASE_HOST} (API_BASE_HOST, docs/versioning.md#choosing-the-version)`, () => {
    it('v2.<base> serves an unprefixed path as v2; v1.<base> as v1 (deprecated)', async () => {
      const v2 = await http().get(`/articles/${articleId}`).set('Host', `v2.${BASE_HOST}`).set('Authorization', bearer(bob.token));
      expect(v2.status).toBe(200);
      expect(v2.body.author).toEqual({ id: alice.user.id, username: 'alice_v', name: 'Alice Writer' });
      expect(v2.body.links[0]).toEqual({ rel: 'self', href: `/v2/articles/${articleId}` });
      const v1 = await http().get(`/articles/${articleId}`).set('Host', `v1.${BASE_HOST}:8443`).set('Authorization', bearer(bob.token));
      expect(v1.status).toBe(200);
      expect(v1.body.author).toBe(alice.user.id);
      expect(v1.headers).toMatchObject(deprecationHeaders(`/v2/articles/${articleId}`));
      const created = await http().post('/todos').set('Host', `v2.${BASE_HOST}`).set('Authorization', bearer(bob.token)).send({ title: 'via subdomain' });
      expect(created.status).toBe(201);
      expect(created.headers.location).toBe(`/v2/todos/${created.body.id}`);
    });

    it('a prefix or an Accept header naming another version → 400; an unknown version subdomain → 404; the base host needs a prefix', async () => {
      const prefix = await http().get(`/v1/articles/${articleId}`).set('Host', `v2.${BASE_HOST}`).set('Authorization', bearer(bob.token));
      expect(prefix.status).toBe(400);
      expect(prefix.body).toEqual(errorBody('bad_request'));
      const agreeing = await http().get(`/v2/articles/${articleId}`).set('Host', `v2.${BASE_HOST}`).set('Authorization', bearer(bob.token));
      expect(agreeing.status).toBe(200);
      const header = await http().get(`/articles/${articleId}`).set('Host', `v2.${BASE_HOST}`).set('Accept', V1).set('Authorization', bearer(bob.token));
      expect(header.status).toBe(400);
      const unknown = await http().get(`/articles/${articleId}`).set('Host', `v7.${BASE_HOST}`).set('Authorization', bearer(bob.token));
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(errorBody('not_found', expect.stringContaining('v7')));
      const base = await http().get(`/articles/${articleId}`).set('Host', BASE_HOST).set('Authorization', bearer(bob.token));
      expect(base.status).toBe(404);
      const other = await http().get(`/articles/${articleId}`).set('Host', 'v2.elsewhere.example.org').set('Authorization', bearer(bob.token));
      expect(other.status).toBe(404);
    });
  });

  describe('one OpenAPI document per version (README.md#api-documentation-and-clients, docs/versioning.md)', () => {
    type Doc = { info: { version: string; description: string }; paths: Record<string, Record<string, any>>; components: Record<string, any> };
    let v1: Doc;
    let v2: Doc;

    beforeAll(async () => {
      const [first, second, newest] = await Promise.all(['/docs/v1/openapi.json', '/docs/v2/openapi.json', '/docs/openapi.json'].map((url) => http().get(url)));
      for (const res of [first, second, newest]) expect(res.status).toBe(200);
      v1 = first.body;
      v2 = second.body;
      expect(newest.body).toEqual(v2); // /docs/openapi.json is the newest
    });

    it('v1 is 1.y.z with only /v1 (and unversioned) paths; v2 is 2.y.z with only /v2 ones', () => {
      expect(v1.info.version).toMatch(/^1\.\d+\.\d+$/);
      expect(v2.info.version).toMatch(/^2\.\d+\.\d+$/);
      // besides its own prefix, only the unversioned operational paths (docs/wire.md#paths: the root, health, discovery)
      const unversioned = (p: string) => p === '/' || p.startsWith('/.well-known/') || p.startsWith('/health/');
      expect(Object.keys(v1.paths).filter((p) => !p.startsWith('/v1/') && !unversioned(p))).toEqual([]);
      expect(Object.keys(v2.paths).filter((p) => !p.startsWith('/v2/') && !unversioned(p))).toEqual([]);
      expect(Object.keys(v1.paths).filter(unversioned).sort()).toEqual(Object.keys(v2.paths).filter(unversioned).sort());
      expect(
        Object.keys(v2.paths)
          .map((p) => p.replace(/^\/v2\//, '/v1/'))
          .sort(),
      ).toEqual(Object.keys(v1.paths).sort());
    });

    it("each document's texts and examples name its own version's paths (no unresolved /v{version}/ placeholder); v2's never a /v1 path", () => {
      const strings = (node: unknown): string[] =>
        typeof node === 'string' ? [node] : node && typeof node === 'object' ? Object.values(node).flatMap(strings) : [];
      for (const [doc, own] of [
        [v1, '1'],
        [v2, '2'],
      ] as const) {
        const texts = strings(doc);
        expect(texts.filter((text) => text.includes('{version}'))).toEqual([]);
        expect(texts.some((text) => text.includes(`POST /v${own}/login`))).toBe(true);
        expect(texts).toContain(`/v${own}/todos/1`);
      }
      // (v1's deprecation texts name their /v2 successors; the OAuth metadata's absolute URLs are the server's own;
      // the root, which lists every version, is the one place v2's document names v1's paths)
      expect(strings(withoutRoot(v2)).filter((text) => /(^|[\s`(<"'])\/v1\//.test(text))).toEqual([]);
      expect(strings(v2.paths['/'])).toContain('/v1/articles/{id}/comments');
    });

    it('v1 marks exactly its articles and comments operations deprecated, with the dates in their description and the headers on every response', () => {
      const deprecated: string[] = [];
      for (const [route, item] of Object.entries(v1.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.deprecated) continue;
          deprecated.push(`${method} ${route}`);
          expect(op.description).toContain('2026-12-01T12:00:00.000Z');
          expect(op.description).toContain('2027-06-30T00:00:00.000Z');
          expect(op.description).toContain(`${method.toUpperCase()} ${route.replace('/v1/', '/v2/')}`);
          for (const response of Object.values<any>(op.responses))
            expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
        }
      }
      expect(deprecated.sort()).toEqual(
        [
          'post /v1/articles',
          'get /v1/articles',
          'get /v1/articles/{id}',
          'put /v1/articles/{id}',
          'patch /v1/articles/{id}',
          'delete /v1/articles/{id}',
          'post /v1/articles/{id}/comments',
          'get /v1/articles/{id}/comments',
          'get /v1/articles/{id}/comments/{comment_id}',
          'put /v1/articles/{id}/comments/{comment_id}',
          'patch /v1/articles/{id}/comments/{comment_id}',
          'delete /v1/articles/{id}/comments/{comment_id}',
        ].sort(),
      );
      expect(v1.components.headers.Deprecation.schema.example).toBe(`@${Date.UTC(2026, 11, 1, 12) / 1000}`);
      expect(v1.components.headers.Sunset.schema.example).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
      expect(v1.info.description).toContain('**deprecated** since 2026-12-01');
      expect(v1.info.description).toContain('**sunset** on 2027-06-30');
      const v2Deprecated = Object.values(v2.paths).flatMap((item) => Object.values<any>(item).filter((op) => op.deprecated));
      expect(v2Deprecated).toEqual([]);
      expect(JSON.stringify(v2)).not.toContain('x-deprecated-version');
    });

    it('names the article and comment schemas Article and Comment in both, with the author an integer in v1 and a UserSummary in v2', () => {
      // an integer in v1 — or, with expand=author, the summary (docs/lists.md#expanding-related-resources-expand)
      expect(v1.components.schemas.Article.properties.author).toMatchObject({ oneOf: [{ type: 'integer' }, { $ref: '#/components/schemas/UserSummary' }] });
      expect(v1.components.schemas.Comment.properties.author).toMatchObject({ oneOf: [{ type: 'integer' }, { $ref: '#/components/schemas/UserSummary' }] });
      for (const name of ['Article', 'Comment']) {
        expect(v2.components.schemas[name].properties.author).toEqual({
          allOf: [{ $ref: '#/components/schemas/UserSummary' }],
          readOnly: true,
          description: expect.any(String),
        });
      }
      expect(v2.components.schemas.UserSummary).toMatchObject({ required: expect.arrayContaining(['id', 'username', 'name']) });
      expect(Object.keys(v2.components.schemas.UserSummary.properties).sort()).toEqual(['id', 'name', 'username']);
      expect(v2.components.schemas.ArticleList.properties.data.items).toEqual({ $ref: '#/components/schemas/Article' });
      for (const name of Object.keys(v2.components.schemas)) expect(name).not.toMatch(/V\d/);
      // the v2 document speaks of v2 paths in its texts and examples
      expect(JSON.stringify(withoutRoot(v2)).match(/.{40}[\s`"(<]\/v1\/.{20}/g)).toBeNull();
      expect(v2.paths['/v2/articles'].post.responses['201'].content['application/json'].example.links[0].href).toBe('/v2/articles/1');
    });

    it('both documents are valid OpenAPI 3.0 and pass Spectral (oas + OWASP) with zero errors', async () => {
      const dir = path.join(ROOT, 'test', 'artifacts', 'openapi');
      mkdirSync(dir, { recursive: true });
      const files = [
        ['openapi.v1.json', v1],
        ['openapi.v2.json', v2],
      ].map(([name, document]) => {
        const file = path.join(dir, name as string);
        writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
        return file;
      });
      const run = await new Promise<{ status: number | string; output: string }>((resolve) => {
        execFile(
          process.execPath,
          [path.join(ROOT, 'scripts', 'check-openapi.mjs'), ...files],
          { cwd: ROOT, encoding: 'utf8', timeout: 170_000 },
          (error, stdout, stderr) => {
            resolve({ status: error ? (error.code ?? error.signal ?? 'failed') : 0, output: `${stdout}${stderr}` });
          },
        );
      });
      expect(run).toEqual({ status: 0, output: expect.stringContaining('spectral: 0 errors') });
      expect(run.output.match(/openapi-parser: valid OpenAPI 3\.0\.\d+ document/g)).toHaveLength(2);
      expect(run.output.match(/spectral: 0 errors/g)).toHaveLength(2);
    }, 180_000);

    it('the docs page offers both documents, the newest first', async () => {
      const init = await http().get('/docs/swagger-ui-init.js');
      expect(init.status).toBe(200);
      const urls = [...init.text.matchAll(/"url":\s*"([^"]+)"/g)].map((match) => match[1]);
      expect(urls).toEqual(expect.arrayContaining(['/docs/v2/openapi.json', '/docs/v1/openapi.json']));
      expect(urls.indexOf('/docs/v2/openapi.json')).toBeLessThan(urls.indexOf('/docs/v1/openapi.json'));
      const yaml = await http().get('/docs/v1/openapi.yaml');
      expect(yaml.status).toBe(200);
      expect(yaml.text).toMatch(/^ {2}version: 1\.\d+\.\d+$/m);
    });
  });
});
