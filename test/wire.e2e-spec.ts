import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Todo } from '../src/todos/todo.entity.js';
import { bearer, createUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { createTestApp } from './setup/test-app.js';

describe('wire basics (docs/wire.md)', () => {
  let app: NestExpressApplication;
  let token: string;

  const http = () => request(app.getHttpServer());
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const todoCount = () => app.get(DataSource).getRepository(Todo).count();

  beforeAll(async () => {
    app = await createTestApp();
    ({ token } = await createUser(app));
  });
  afterAll(async () => {
    await app.close();
  });

  it('runs on the database chosen by the global setup', () => {
    expect(process.env.DATABASE_URL).toMatch(/^(sqlite:.*resource-api-e2e-|postgres)/);
  });

  it('answers an unknown route with 404 ErrorResp', async () => {
    const res = await request(app.getHttpServer()).get('/v1/nothing-here').set('Authorization', bearer(token));
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ error: expect.any(String), code: 'not_found', request_id: expect.any(String) });
  });

  it('answers a known path with an unsupported method with 405 and Allow', async () => {
    const res = await request(app.getHttpServer()).delete('/v1/todos').set('Authorization', bearer(token));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.body.code).toBe('method_not_allowed');
    const member = await request(app.getHttpServer()).post('/v1/todos/1');
    expect(member.status).toBe(405);
    expect(member.headers.allow).toBe('GET, HEAD, PUT, PATCH, DELETE');
  });

  describe('request bodies', () => {
    it('answers a body over 100 KiB with 413 payload_too_large', async () => {
      const body = JSON.stringify({ title: 'big', content: 'a'.repeat(100 * 1024) });
      expect(Buffer.byteLength(body)).toBeGreaterThan(100 * 1024);
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual({ error: 'request body is larger than 100 KiB', code: 'payload_too_large', request_id: res.headers['x-request-id'] });
    });

    it('parses a body of exactly 100 KiB (then validates it)', async () => {
      const skeleton = JSON.stringify({ title: 'edge', content: '' });
      const body = JSON.stringify({ title: 'edge', content: 'a'.repeat(100 * 1024 - Buffer.byteLength(skeleton)) });
      expect(Buffer.byteLength(body)).toBe(100 * 1024);
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'content', message: expect.any(String) }] });
    });

    it('answers a text/plain body with 415', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'text/plain').send('{"title":"x"}');
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ error: expect.stringContaining('text/plain'), code: 'unsupported_media_type', request_id: res.headers['x-request-id'] });
    });

    it('answers a form body with 415', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).type('form').send('title=x');
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'unsupported_media_type' });
    });

    it('answers a POST body without Content-Type with 415', async () => {
      const before = await todoCount();
      // a Buffer body makes supertest send no Content-Type header
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).send(Buffer.from('{"title":"x"}'));
      expect((res as unknown as { req: { getHeader(name: string): unknown } }).req.getHeader('content-type')).toBeUndefined();
      expect(res.status).toBe(415);
      expect(res.body).toEqual({
        error: 'Content-Type is required; send application/json',
        code: 'unsupported_media_type',
        request_id: res.headers['x-request-id'],
      });
      await expect(todoCount()).resolves.toBe(before);
    });

    it('answers application/merge-patch+json on POST with 415', async () => {
      const res = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ title: 'x' }));
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'unsupported_media_type', error: expect.stringContaining('application/merge-patch+json') });
    });

    it('answers a charset other than utf-8 with 415 and accepts utf-8', async () => {
      const latin = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(token))
        .set('Content-Type', 'application/json; charset=iso-8859-1')
        .send('{"title":"x"}');
      expect(latin.status).toBe(415);
      expect(latin.body).toMatchObject({ code: 'unsupported_media_type' });
      const utf8 = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(token))
        .set('Content-Type', 'application/json; charset=utf-8')
        .send('{"title":"ü"}');
      expect(utf8.status).toBe(201);
      expect(utf8.body).toMatchObject({ title: 'ü' });
    });

    it('answers malformed JSON with 400', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'application/json').send('{"title": ');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'request body is not valid JSON', code: 'bad_request', request_id: res.headers['x-request-id'] });
    });

    it.each([
      ['an array', '[{"title":"x"}]'],
      ['a string', '"hello"'],
      ['a number', '42'],
      ['null', 'null'],
    ])('answers a JSON body that is %s with 400', async (_kind, body) => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'request body must be a JSON object', code: 'bad_request', request_id: res.headers['x-request-id'] });
    });

    it('answers a missing body on POST with 400', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(token));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', request_id: res.headers['x-request-id'] });
    });
  });

  describe('X-Request-Id', () => {
    it('echoes a sane caller id, in the header and in an error body', async () => {
      const ok = await http().get('/v1/todos').set('Authorization', bearer(token)).set('X-Request-Id', 'abc-123');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toBe('abc-123');
      expect(ok.body).toMatchObject({ data: expect.any(Array) });
      const error = await http().get('/v1/todos/abc').set('Authorization', bearer(token)).set('X-Request-Id', 'abc-123');
      expect(error.status).toBe(400);
      expect(error.headers['x-request-id']).toBe('abc-123');
      expect(error.body.request_id).toBe('abc-123');
    });

    it('generates a UUID when the caller sends none', async () => {
      const res = await http().get('/v1/todos').set('Authorization', bearer(token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: expect.any(Array) });
      expect(res.headers['x-request-id']).toMatch(UUID);
      const again = await http().get('/v1/todos').set('Authorization', bearer(token));
      expect(again.status).toBe(200);
      expect(again.headers['x-request-id']).toMatch(UUID);
      expect(again.headers['x-request-id']).not.toBe(res.headers['x-request-id']);
    });

    it.each([
      ['300 characters', 'a'.repeat(300)],
      ['spaces', 'abc 123'],
      ['a quote and angle brackets', '<script>"x"</script>'],
      ['a slash', 'a/b'],
    ])('replaces an insane caller id (%s) with a UUID', async (_kind, sent) => {
      const res = await http().get('/v1/nothing-here').set('Authorization', bearer(token)).set('X-Request-Id', sent);
      expect(res.status).toBe(404);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body).toEqual({ error: expect.any(String), code: 'not_found', request_id: res.headers['x-request-id'] });
    });

    it('is on every response, and every error body repeats it', async () => {
      const cases: Array<{ name: string; send: () => request.Test; status: number }> = [
        { name: 'unknown route', send: () => http().get('/nowhere'), status: 404 },
        { name: 'unknown route under /v1', send: () => http().get('/v1/nothing-here').set('Authorization', bearer(token)), status: 404 },
        { name: 'missing todo', send: () => http().get('/v1/todos/999999').set('Authorization', bearer(token)), status: 404 },
        { name: 'unsupported method', send: () => http().delete('/v1/todos').set('Authorization', bearer(token)), status: 405 },
        { name: 'no credential', send: () => http().get('/v1/todos'), status: 401 },
        { name: 'bad token', send: () => http().get('/v1/todos').set('Authorization', 'Bearer nope'), status: 401 },
        { name: 'bad query', send: () => http().get('/v1/todos?size=0').set('Authorization', bearer(token)), status: 400 },
        { name: 'credential in query', send: () => http().get('/v1/todos?token=x'), status: 400 },
        { name: 'bad body', send: () => http().post('/v1/todos').set('Authorization', bearer(token)).send({}), status: 400 },
        {
          name: 'invalid value',
          send: () => http().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'x', status: 'finished' }),
          status: 422,
        },
        {
          name: 'wrong media type',
          send: () => http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'text/plain').send('x'),
          status: 415,
        },
        { name: 'wrong login', send: () => http().post('/v1/login').send({ username: 'nobody', password: 'wrong-password' }), status: 401 },
      ];
      for (const { name, send, status } of cases) {
        const res = await send();
        expect({ name, status: res.status }).toEqual({ name, status });
        expect({ name, id: res.headers['x-request-id'] }).toEqual({ name, id: expect.stringMatching(UUID) });
        expect({ name, request_id: res.body.request_id }).toEqual({ name, request_id: res.headers['x-request-id'] });
        expect({ name, type: res.headers['content-type'] }).toEqual({ name, type: 'application/json; charset=utf-8' });
      }

      const created = await http().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'has an id' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ title: 'has an id' });
      expect(created.headers['x-request-id']).toMatch(UUID);
      const deleted = await http().delete(`/v1/todos/${created.body.id}`).set('Authorization', bearer(token));
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expect(deleted.headers['x-request-id']).toMatch(UUID);
      const docs = await http().get('/docs/openapi.json');
      expect(docs.status).toBe(200);
      expect(docs.body.openapi).toEqual(expect.any(String));
      expect(docs.headers['x-request-id']).toMatch(UUID);
    });
  });

  describe('credentials in the query string (docs/wire.md#query-strings)', () => {
    it.each(['token', 'access_token', 'api_key', 'apikey', 'key'])('answers ?%s= with 400 naming it', async (name) => {
      const res = await http().get(`/v1/todos?${name}=secret-value`).set('Authorization', bearer(token));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: 'bad_request',
        details: [{ field: name, message: expect.stringContaining(name) }],
        request_id: res.headers['x-request-id'],
      });
      expect(JSON.stringify(res.body)).not.toContain('secret-value');
    });

    it('refuses them without a credential too, and on POST /v1/login', async () => {
      const anonymous = await http().get('/v1/todos?access_token=secret-value');
      expect(anonymous.status).toBe(400);
      expect(anonymous.body).toMatchObject({ code: 'bad_request', details: [{ field: 'access_token', message: expect.any(String) }] });

      const { user } = await createUser(app);
      const login = await http().post('/v1/login?token=secret-value').send({ username: user.username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(400);
      expect(login.body).toMatchObject({ code: 'bad_request', details: [{ field: 'token', message: expect.any(String) }] });
      expect(login.body).not.toHaveProperty('token');

      const ok = await http().post('/v1/login').send({ username: user.username, password: DEFAULT_PASSWORD });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ token: expect.any(String), token_type: 'Bearer' });
    });

    it('names every credential parameter sent', async () => {
      const res = await http().get('/v1/todos?key=a&apikey=b').set('Authorization', bearer(token));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['apikey', 'key']);
    });
  });

  describe('path ids (docs/wire.md#ids)', () => {
    it.each(['abc', '0', '1.5', '-1', '01', '99999999999', '2147483648'])('answers /v1/todos/%s with 400', async (id) => {
      const res = await http().get(`/v1/todos/${id}`).set('Authorization', bearer(token));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'id must be a positive integer',
        code: 'bad_request',
        details: [{ field: 'id', message: expect.stringContaining('2147483647') }],
        request_id: res.headers['x-request-id'],
      });
    });

    it('answers a bad id with 400 on every member operation and on users', async () => {
      const patch = await http().patch('/v1/todos/abc').set('Authorization', bearer(token)).send({ status: 'done' });
      expect(patch.status).toBe(400);
      expect(patch.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id' }] });
      const put = await http().put('/v1/todos/0').set('Authorization', bearer(token)).send({ title: 'x' });
      expect(put.status).toBe(400);
      expect(put.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id' }] });
      const del = await http().delete('/v1/todos/1.5').set('Authorization', bearer(token));
      expect(del.status).toBe(400);
      expect(del.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id' }] });
      const user = await http().get('/v1/users/99999999999').set('Authorization', bearer(token));
      expect(user.status).toBe(400);
      expect(user.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id' }] });
    });

    it('accepts the largest id (2147483647) and answers 404 for it', async () => {
      const res = await http().get('/v1/todos/2147483647').set('Authorization', bearer(token));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'todo 2147483647 not found', code: 'not_found', request_id: res.headers['x-request-id'] });
    });
  });

  describe('query parameters on operations that take none', () => {
    it('answers POST /v1/todos?x=1 with 400 naming it, creating nothing', async () => {
      const before = await todoCount();
      const res = await http().post('/v1/todos?x=1').set('Authorization', bearer(token)).send({ title: 'x' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'unknown query parameter x',
        code: 'bad_request',
        details: [{ field: 'x', message: 'unknown query parameter x' }],
        request_id: res.headers['x-request-id'],
      });
      await expect(todoCount()).resolves.toBe(before);
    });

    it('answers a query parameter on PATCH, PUT and DELETE with 400', async () => {
      const created = await http().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'keep me' });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      const patch = await http().patch(`/v1/todos/${id}?status=done`).set('Authorization', bearer(token)).send({ title: 'changed' });
      expect(patch.status).toBe(400);
      expect(patch.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: 'unknown query parameter status' }] });
      const put = await http().put(`/v1/todos/${id}?fields=title`).set('Authorization', bearer(token)).send({ title: 'changed' });
      expect(put.status).toBe(400);
      expect(put.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields' }] });
      const del = await http().delete(`/v1/todos/${id}?force=1`).set('Authorization', bearer(token));
      expect(del.status).toBe(400);
      expect(del.body).toMatchObject({ code: 'bad_request', details: [{ field: 'force' }] });

      const read = await http().get(`/v1/todos/${id}`).set('Authorization', bearer(token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });
  });

  describe('response headers', () => {
    it("sends no Express ETag and no X-Powered-By, and JSON as utf-8; only a single resource carries the service's own ETag", async () => {
      // Express's body-hash ETag stays off; single resources carry the row-version tag, lists and errors none (docs/wire.md#caching)
      const noCacheHeaders = (res: request.Response, etag?: RegExp) => {
        if (etag) expect(res.headers.etag).toMatch(etag);
        else expect(res.headers.etag).toBeUndefined();
        expect(res.headers['x-powered-by']).toBeUndefined();
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      };
      const created = await http().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'headers' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ title: 'headers' });
      noCacheHeaders(created, /^"1\.v1"$/);

      const one = await http().get(`/v1/todos/${created.body.id}`).set('Authorization', bearer(token));
      expect(one.status).toBe(200);
      expect(one.body).toEqual(created.body);
      noCacheHeaders(one, /^"1\.v1"$/);

      const list = await http().get('/v1/todos').set('Authorization', bearer(token));
      expect(list.status).toBe(200);
      expect(list.body.data).toContainEqual(created.body);
      noCacheHeaders(list);

      const error = await http().get('/v1/nothing-here');
      expect(error.status).toBe(404);
      expect(error.body).toMatchObject({ code: 'not_found' });
      noCacheHeaders(error);
    });
  });

  describe('documentation (README.md#api-documentation-and-clients)', () => {
    type Operation = { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> };
    let doc: {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    };

    beforeAll(async () => {
      const res = await http().get('/docs/v1/openapi.json');
      expect(res.status).toBe(200);
      doc = res.body;
    });

    it('serves an OpenAPI 3.0.x document as JSON', async () => {
      const res = await http().get('/docs/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.openapi).toMatch(/^3\.0\.\d+$/);
      expect(res.body.info.version).toMatch(/^1\.\d+\.\d+$/);
    });

    it('declares ErrorResp and the resource schemas as named components', () => {
      const schemas = doc.components.schemas;
      expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['ErrorResp', 'User', 'Todo', 'UserList', 'TodoList', 'Link']));
      expect(Object.keys(schemas.ErrorResp.properties ?? {}).sort()).toEqual(['code', 'details', 'error', 'request_id']);
      expect([...(schemas.ErrorResp.required ?? [])].sort()).toEqual(['code', 'error', 'request_id']);
      expect(Object.keys(schemas.Todo.properties ?? {})).toEqual(
        expect.arrayContaining(['id', 'title', 'content', 'status', 'owner', 'created_at', 'updated_at', 'links']),
      );
      expect(Object.keys(schemas.User.properties ?? {})).toEqual(expect.arrayContaining(['id', 'username', 'name', 'role', 'links']));
      expect(schemas.User.properties).not.toHaveProperty('password');
      expect(schemas.User.properties).not.toHaveProperty('password_hash');
    });

    it('documents the resource and auth paths', () => {
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/todos', '/v1/todos/{id}', '/v1/users', '/v1/users/{id}', '/v1/login']));
      expect(Object.keys(doc.paths['/v1/todos']).sort()).toEqual(['get', 'post']);
      expect(Object.keys(doc.paths['/v1/todos/{id}']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    });

    it('documents at least one 4xx response with ErrorResp on every /v1 operation', () => {
      const methods = ['get', 'post', 'put', 'patch', 'delete'];
      const operations = Object.entries(doc.paths)
        .filter(([path]) => path.startsWith('/v1/'))
        .flatMap(([path, item]) =>
          Object.entries(item)
            .filter(([method]) => methods.includes(method))
            .map(([method, op]) => ({ at: `${method} ${path}`, op })),
        );
      expect(operations.length).toBeGreaterThanOrEqual(9);
      const missing = operations
        .filter(
          ({ op }) =>
            !Object.entries(op.responses).some(
              ([status, response]) => /^4\d\d$/.test(status) && response.content?.['application/json']?.schema?.$ref === '#/components/schemas/ErrorResp',
            ),
        )
        .map(({ at }) => at);
      expect(missing).toEqual([]);
      // every documented error status references ErrorResp — except on the OAuth protocol endpoints,
      // whose RFC 6749 error bodies and HTML error pages are the documented exception
      const wrong = operations
        .filter(({ at }) => !at.includes(' /v1/oauth/'))
        .flatMap(({ at, op }) =>
          Object.entries(op.responses)
            .filter(
              ([status, response]) => /^[45]\d\d$/.test(status) && response.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorResp',
            )
            .map(([status]) => `${at} ${status}`),
        );
      expect(wrong).toEqual([]);
    });

    it('serves the interactive page at /docs', async () => {
      const res = await http().get('/docs');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/<html/i);
      expect(res.text.toLowerCase()).toContain('swagger');
    });
  });
});
