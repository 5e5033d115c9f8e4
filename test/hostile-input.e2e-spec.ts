import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { MAX_JSON_DEPTH } from '../src/common/middleware/input-rules.js';
import { Todo } from '../src/todos/todo.entity.js';
import { User } from '../src/users/user.entity.js';
import { bearer, createUser } from './factories/user.factory.js';
import { createTestApp } from './setup/test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The ErrorResp of a 400 naming exactly these fields, with the request id of the response. */
function expectRefusal(res: request.Response, status: number, code: string, fields?: string[]): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: {
      error: expect.any(String),
      code,
      ...(fields ? { details: fields.map((field) => ({ field, message: expect.any(String) })) } : {}),
      request_id: res.headers['x-request-id'],
    },
  });
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
}

/** Sends raw bytes and returns everything the server wrote until it closed the connection. */
function rawExchange(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => (chunks.length > 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(error)));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(bytes);
  });
}

/** Status line, headers (lower-case names) and JSON body of a raw HTTP/1.1 response. */
function parseRaw(text: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n')) };
}

describe('hostile input (docs/wire.md, docs/errors.md#codes)', () => {
  let app: NestExpressApplication;
  let token: string;
  let port: number;

  const http = () => request(app.getHttpServer());
  const todoCount = () => app.get(DataSource).getRepository(Todo).count();
  const postTodoRaw = (body: string | Buffer, headers: Record<string, string> = {}) => {
    let req = http().post('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'application/json');
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    // as bytes: superagent would otherwise serialise a Buffer sent as application/json
    return req.serialize((data: unknown) => data as string).send(Buffer.isBuffer(body) ? body : Buffer.from(body));
  };

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
    ({ token } = await createUser(app));
  });
  afterAll(async () => {
    await app.close();
  });

  describe('U+0000 in any string → 400 naming the field, nothing stored', () => {
    it('refuses it in a body value, a nested value and a property name', async () => {
      const before = await todoCount();
      expectRefusal(await http().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'a\u0000b' }), 400, 'bad_request', ['title']);
      expectRefusal(await postTodoRaw('{"title":"ok","extra":{"deep":["fine","x\\u0000"]}}'), 400, 'bad_request', ['extra.deep[1]']);
      const key = await postTodoRaw('{"title":"ok","ti\\u0000tle":"x"}');
      expectRefusal(key, 400, 'bad_request', ['ti\\u0000tle']);
      expect(await todoCount()).toBe(before);
    });

    it('refuses it in PATCH and PUT bodies (merge patch too)', async () => {
      const created = await http().post('/v1/todos').set('Authorization', bearer(token)).send({ title: 'clean' });
      expect(created.status).toBe(201);
      const patch = await http()
        .patch(`/v1/todos/${created.body.id}`)
        .set('Authorization', bearer(token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ content: '\u0000' }));
      expectRefusal(patch, 400, 'bad_request', ['content']);
      expectRefusal(await http().put(`/v1/todos/${created.body.id}`).set('Authorization', bearer(token)).send({ title: '\u0000' }), 400, 'bad_request', [
        'title',
      ]);
      const stored = await http().get(`/v1/todos/${created.body.id}`).set('Authorization', bearer(token));
      expect(stored.body).toMatchObject({ title: 'clean', content: null });
    });

    it('refuses it in the login username and in registration, before any database work', async () => {
      expectRefusal(await http().post('/v1/login').send({ username: 'ali\u0000ce', password: 'password-123' }), 400, 'bad_request', ['username']);
      const users = await app.get(DataSource).getRepository(User).count();
      expectRefusal(await http().post('/v1/users').send({ username: 'nul\u0000user', password: 'long enough pw', name: 'N' }), 400, 'bad_request', [
        'username',
      ]);
      expect(await app.get(DataSource).getRepository(User).count()).toBe(users);
    });

    it('refuses it in the password-reset request and the reset, before any database work', async () => {
      expectRefusal(await http().post('/v1/password-reset-requests').send({ email: 'ada\u0000@example.com' }), 400, 'bad_request', ['email']);
      expectRefusal(await http().post('/v1/password-resets').send({ token: 'abc\u0000def', password: 'long enough pw' }), 400, 'bad_request', ['token']);
      expectRefusal(await http().post('/v1/password-resets').send({ token: 'abcdef', password: 'long enough\u0000pw' }), 400, 'bad_request', ['password']);
    });

    it('refuses it in an e-mail verification, before any database work', async () => {
      expectRefusal(await http().post('/v1/email-verifications').send({ token: 'abc\u0000def' }), 400, 'bad_request', ['token']);
      expectRefusal(
        await http()
          .post('/v1/email-verifications')
          .send({ token: ['abc'] }),
        400,
        'bad_request',
        ['token'],
      );
    });

    it('refuses it in a form body', async () => {
      const res = await http().post('/v1/oauth/token').type('form').send('grant_type=authorization_code&code=a%00b');
      expectRefusal(res, 400, 'bad_request', ['code']);
    });

    it('refuses it in a query value or name, naming the parameter, on every path', async () => {
      expectRefusal(await http().get('/v1/todos?status=%00').set('Authorization', bearer(token)), 400, 'bad_request', ['status']);
      expectRefusal(await http().get('/v1/todos?sta%00tus=done').set('Authorization', bearer(token)), 400, 'bad_request', ['sta\\u0000tus']);
      expectRefusal(await http().get('/health/live?x=%00'), 400, 'bad_request', ['x']);
      expectRefusal(await http().get('/docs/openapi.json?q=%00'), 400, 'bad_request', ['q']);
    });

    it('refuses it in a path segment, known route or not', async () => {
      expectRefusal(await http().get('/v1/todos/%00').set('Authorization', bearer(token)), 400, 'bad_request', ['path']);
      expectRefusal(await http().get('/v1/users/by-name/a%00b'), 400, 'bad_request', ['path']);
    });
  });

  describe('malformed percent-encoding', () => {
    it.each(['/v1/todos/%E0%A4%A', '/v1/todos/%ZZ', '/v1/todos/%ED%A0%80'])('answers %s with 400, not 500', async (path) => {
      expectRefusal(await http().get(path).set('Authorization', bearer(token)), 400, 'bad_request');
    });

    it('answers a malformed query parameter with 400, not 500', async () => {
      const res = await http().get('/v1/todos?sort=%E0%A4%A').set('Authorization', bearer(token));
      expectRefusal(res, 400, 'bad_request', ['sort']);
    });
  });

  describe('UTF-8 and surrogates (docs/wire.md#request-bodies)', () => {
    it('refuses a body that is not valid UTF-8', async () => {
      const before = await todoCount();
      const bytes = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
      const res = await postTodoRaw(bytes);
      expectRefusal(res, 400, 'bad_request');
      expect(res.body.error).toBe('request body is not valid UTF-8');
      // a surrogate encoded as UTF-8 bytes (CESU) is not UTF-8 either
      expectRefusal(await postTodoRaw(Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])), 400, 'bad_request');
      expect(await todoCount()).toBe(before);
    });

    it('refuses an unpaired surrogate escape in a value or a name, accepts a pair', async () => {
      expectRefusal(await postTodoRaw('{"title":"\\ud800"}'), 400, 'bad_request', ['title']);
      expectRefusal(await postTodoRaw('{"title":"x\\udc00y"}'), 400, 'bad_request', ['title']);
      expectRefusal(await postTodoRaw('{"title":"ok","\\ud800":1}'), 400, 'bad_request', ['\\ud800']);
      const pair = await postTodoRaw('{"title":"smile \\ud83d\\ude00"}');
      expect(pair.status).toBe(201);
      expect(pair.body.title).toBe('smile \u{1f600}');
    });

    it('accepts a UTF-8 byte order mark before the JSON text', async () => {
      const res = await postTodoRaw(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"title":"bom"}')]));
      expect(res.status).toBe(201);
    });
  });

  describe(`nesting depth limit (${MAX_JSON_DEPTH})`, () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;

    it(`passes ${MAX_JSON_DEPTH} levels to validation and refuses ${MAX_JSON_DEPTH + 1} before it`, async () => {
      const atLimit = await postTodoRaw(`{"title":"x","extra":${nested(MAX_JSON_DEPTH - 1)}}`);
      expectRefusal(atLimit, 400, 'bad_request', ['extra']);
      const over = await postTodoRaw(`{"title":"x","extra":${nested(MAX_JSON_DEPTH)}}`);
      expectRefusal(over, 400, 'bad_request');
      expect(over.body.error).toBe(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    });

    it('refuses bodies nested tens of thousands deep with 400 (no stack overflow), on public endpoints too', async () => {
      const arrays = `{"items":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
      const objects = `${'{"":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
      expect(arrays.length).toBeLessThan(100 * 1024);
      expect(objects.length).toBeLessThan(100 * 1024);
      expectRefusal(await postTodoRaw(arrays), 400, 'bad_request');
      expectRefusal(await http().post('/v1/users').set('Content-Type', 'application/json').send(objects), 400, 'bad_request');
      expectRefusal(
        await http()
          .post('/v1/login')
          .set('Content-Type', 'application/json')
          .send(`{"username":${'['.repeat(90_000)}}`),
        400,
        'bad_request',
      );
      // an unterminated one: still the depth, not the syntax, is what refuses it
      const unterminated = await http().post('/v1/users').set('Content-Type', 'application/json').send('['.repeat(100_000));
      expect(unterminated.body.error).toBe(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    });

    it('does not count brackets inside strings', async () => {
      const res = await postTodoRaw(JSON.stringify({ title: '['.repeat(100), content: '{'.repeat(1000) }));
      expect(res.status).toBe(201);
    });

    it('handles a form body of the maximum size without trouble', async () => {
      const res = await http()
        .post('/v1/oauth/token')
        .type('form')
        .send(`grant_type=${'%5B'.repeat(30_000)}`);
      expect(res.status).toBe(400);
      expect(res.body).not.toHaveProperty('code', 'internal');
    });
  });

  describe('Content-Encoding (docs/wire.md#request-bodies)', () => {
    const body = JSON.stringify({ title: 'compressed' });

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const)('accepts a %s body', async (encoding, compress) => {
      const res = await postTodoRaw(compress(Buffer.from(body)), { 'Content-Encoding': encoding });
      expect(res.status).toBe(201);
      expect(res.body.title).toBe('compressed');
    });

    it.each(['compress', 'foo', 'zstd', 'gzip, gzip', 'x-gzip'])('refuses Content-Encoding %s with 415', async (encoding) => {
      const res = await postTodoRaw(Buffer.from(body), { 'Content-Encoding': encoding });
      expectRefusal(res, 415, 'unsupported_media_type');
    });

    it.each(['gzip', 'deflate', 'br'])('refuses a corrupt %s body with 400', async (encoding) => {
      const before = await todoCount();
      const res = await postTodoRaw(Buffer.from('this is not compressed at all, really not'), { 'Content-Encoding': encoding });
      expectRefusal(res, 400, 'bad_request');
      expect(res.body.error).toBe(`request body is not valid ${encoding} data`);
      const truncated = gzipSync(Buffer.from(body)).subarray(0, 12);
      expectRefusal(await postTodoRaw(truncated, { 'Content-Encoding': 'gzip' }), 400, 'bad_request');
      expect(await todoCount()).toBe(before);
    });

    it('applies the 100 KiB limit after decompression (413)', async () => {
      const big = gzipSync(Buffer.from(JSON.stringify({ title: 'x', content: ' '.repeat(5 * 1024 * 1024) })));
      expect(big.length).toBeLessThan(100 * 1024);
      expectRefusal(await postTodoRaw(big, { 'Content-Encoding': 'gzip' }), 413, 'payload_too_large');
    });

    it('applies the text rules to the decompressed body', async () => {
      expectRefusal(await postTodoRaw(gzipSync(Buffer.from('{"title":"\\u0000"}')), { 'Content-Encoding': 'gzip' }), 400, 'bad_request', ['title']);
    });
  });

  describe('prototype-named properties at any depth (docs/wire.md#request-bodies)', () => {
    it.each(['__proto__', 'constructor', 'prototype'])('refuses %s nested in an order item, naming its path', async (name) => {
      const res = await http()
        .post('/v1/orders')
        .set('Authorization', bearer(token))
        .set('Content-Type', 'application/json')
        .send(`{"currency":"EUR","items":[{"sku":"A-1","quantity":1,"${name}":{"polluted":true}}]}`);
      expectRefusal(res, 400, 'bad_request', [`items[0].${name}`]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('refuses them at the top level and deep in unknown members too', async () => {
      expectRefusal(await postTodoRaw('{"title":"x","__proto__":{"a":1}}'), 400, 'bad_request', ['__proto__']);
      expectRefusal(await postTodoRaw('{"title":"x","a":[{"b":{"constructor":{}}}]}'), 400, 'bad_request', ['a[0].b.constructor']);
    });

    it('refuses them in a form body', async () => {
      expectRefusal(await http().post('/v1/oauth/token').type('form').send('grant_type=x&__proto__=y'), 400, 'bad_request', ['__proto__']);
    });
  });

  describe('a body sent to an operation that takes none (docs/wire.md#request-bodies)', () => {
    it('refuses its properties with 400 and does nothing; {} and no body pass', async () => {
      const { token: own } = await createUser(app);
      const refused = await http()
        .post('/v1/logout')
        .set('Authorization', bearer(own))
        .set('Content-Type', 'application/json')
        .send('{"password_hash":null,"role":"admin"}');
      expectRefusal(refused, 400, 'bad_request', ['password_hash', 'role']);
      expect(refused.body.details[0].message).toBe('password_hash is not an accepted property');
      // not logged out: the token still works
      expect((await http().get('/v1/todos').set('Authorization', bearer(own))).status).toBe(200);
      const empty = await http().post('/v1/logout').set('Authorization', bearer(own)).set('Content-Type', 'application/json').send('{}');
      expect(empty.status).toBe(204);
      expect((await http().get('/v1/todos').set('Authorization', bearer(own))).status).toBe(401);
      const { token: other } = await createUser(app);
      expect((await http().post('/v1/logout').set('Authorization', bearer(other))).status).toBe(204);
    });
  });

  describe('credential query parameters on every path (docs/wire.md#query-strings)', () => {
    it.each([
      '/',
      '/docs',
      '/docs/',
      '/docs/openapi.json',
      '/docs/v1/openapi.yaml',
      '/health/live',
      '/health/ready',
      '/nowhere',
      '/v1/oauth/authorize',
      '/.well-known/oauth-authorization-server',
    ])('refuses ?access_token= on %s', async (path) => {
      const res = await http().get(`${path}?access_token=secret-value`);
      expectRefusal(res, 400, 'bad_request', ['access_token']);
      expect(res.text).not.toContain('secret-value');
    });

    it('refuses them on a POST to an unknown route, whatever the body', async () => {
      const res = await http().post('/nowhere?token=x').set('Content-Type', 'text/plain').send('hello');
      expectRefusal(res, 400, 'bad_request', ['token']);
    });
  });

  describe('routing decides before the body is looked at (docs/wire.md#request-bodies)', () => {
    it('answers an unsupported method with a non-JSON body with 405 and Allow', async () => {
      const res = await http().delete('/v1/todos').set('Authorization', bearer(token)).set('Content-Type', 'text/plain').send('not json');
      expectRefusal(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      const put = await http().put('/v1/todos').set('Content-Type', 'application/xml').send('<x/>');
      expectRefusal(put, 405, 'method_not_allowed');
      const patch = await http().patch('/health/live').set('Content-Encoding', 'foo').set('Content-Type', 'text/plain').send('x');
      expectRefusal(patch, 405, 'method_not_allowed');
    });

    it('answers an unknown path with a non-JSON or broken body with 404', async () => {
      expectRefusal(await http().post('/v1/nothing-here').set('Content-Type', 'text/plain').send('hello'), 404, 'not_found');
      expectRefusal(await http().put('/nowhere').set('Content-Type', 'application/json').send('{broken'), 404, 'not_found');
      expectRefusal(await http().post('/nowhere').set('Content-Type', 'application/json').set('Content-Encoding', 'gzip').send('not gzip'), 404, 'not_found');
    });
  });

  describe("refusals of Node's HTTP parser (raw sockets)", () => {
    const expectRawRefusal = (text: string, status: number) => {
      const res = parseRaw(text);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.connection).toBe('close');
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: expect.stringMatching(/^(bad_request|payload_too_large)$/),
        request_id: res.headers['x-request-id'],
      });
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
    };

    it('answers a huge header with 431 and an ErrorResp', async () => {
      const text = await rawExchange(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
      expectRawRefusal(text, 431);
    });

    it('answers a huge URL with 431 and an ErrorResp', async () => {
      const text = await rawExchange(port, `GET /health/live?q=${'a'.repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expectRawRefusal(text, 431);
    });

    it.each([
      ['a malformed request line', 'NOT HTTP AT ALL\r\n\r\n'],
      ['a header without a colon', 'GET /health/live HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
      ['a control character in the URL', 'GET /health/\u0000live HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['a bad chunk size', 'POST /v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
    ])('answers %s with 400 and an ErrorResp', async (_name, bytes) => {
      expectRawRefusal(await rawExchange(port, bytes), 400);
    });

    it('still serves well-formed requests on new connections afterwards', async () => {
      const res = await http().get('/health/live');
      expect(res.status).toBe(200);
    });
  });
});
