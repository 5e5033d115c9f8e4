import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import request from 'supertest';
import { ApiException } from '../src/common/errors/api-exception.js';
import { TodosService } from '../src/todos/todos.service.js';
import { bearer, createUser } from './factories/user.factory.js';
import { ResponseValidator, violationStore } from './setup/openapi-validation.js';
import { createTestApp } from './setup/test-app.js';

/**
 * The validator is itself tested: the validator that checks every e2e
 * response against the OpenAPI document (test/setup/openapi-validation.ts) really refuses what
 * breaks the document, and createTestApp really runs it.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ content: { 'application/json': { schema } } });

const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'validator test', version: '1.0.0' },
  paths: {
    '/v1/things': {
      get: {
        parameters: [{ in: 'query', name: 'fields', schema: { type: 'string' } }],
        responses: { 200: { description: 'list', ...json(ref('ThingList')) }, 400: { description: 'bad', ...json(ref('ErrorResp')) } },
      },
      post: {
        responses: {
          201: {
            description: 'created',
            headers: { Location: { $ref: '#/components/headers/Location' }, 'X-Request-Id': { required: true, schema: { type: 'string' } } },
            ...json(ref('Thing')),
          },
          429: { description: 'limited', headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 } } }, ...json(ref('ErrorResp')) },
        },
      },
    },
    '/v1/things/{id}': {
      get: {
        parameters: [{ in: 'query', name: 'fields', schema: { type: 'string' } }],
        responses: { 200: { description: 'one', ...json(ref('Thing')) }, 404: { description: 'none', ...json(ref('ErrorResp')) } },
      },
      delete: { responses: { 204: { description: 'deleted' } } },
    },
    '/v1/things/mine': {
      get: {
        responses: { 200: { description: 'literal path wins', ...json({ type: 'object', properties: { mine: { type: 'boolean' } }, required: ['mine'] }) } },
      },
    },
  },
  components: {
    headers: { Location: { schema: { type: 'string', pattern: '^/v1/' } } },
    schemas: {
      Link: { type: 'object', properties: { rel: { type: 'string' }, href: { type: 'string' } }, required: ['rel', 'href'] },
      Thing: {
        type: 'object',
        properties: {
          id: { type: 'integer', format: 'int32' },
          name: { type: 'string' },
          note: { type: 'string', nullable: true },
          kind: { type: 'string', enum: ['a', 'b'], nullable: true },
          password: { type: 'string', writeOnly: true },
          created_at: { type: 'string', format: 'date-time' },
          links: { type: 'array', items: ref('Link') },
        },
        required: ['id', 'name', 'note', 'kind', 'created_at', 'links'],
      },
      ThingList: {
        type: 'object',
        properties: {
          data: { type: 'array', items: ref('Thing') },
          page: { type: 'integer' },
          size: { type: 'integer' },
          total: { type: 'integer' },
          links: { type: 'array', items: ref('Link') },
        },
        required: ['data', 'page', 'size', 'total', 'links'],
      },
      ErrorResp: {
        type: 'object',
        properties: {
          error: { type: 'string' },
          code: { type: 'string' },
          details: { type: 'array', items: { type: 'object' } },
          request_id: { type: 'string' },
        },
        required: ['error', 'code', 'request_id'],
      },
    },
  },
} as unknown as OpenAPIObject;

const THING = { id: 1, name: 'one', note: null, kind: 'a', created_at: '2026-11-21T10:15:00.000Z', links: [{ rel: 'self', href: '/v1/things/1' }] };
const ERROR = { error: 'thing 2 not found', code: 'not_found', request_id: 'r-1' };

describe('OpenAPI response validation (true to the service)', () => {
  const validator = new ResponseValidator(DOCUMENT);

  /** The problems the validator finds in one response. */
  function check(method: string, url: string, status: number, body?: unknown, headers: Record<string, string> = {}) {
    const parsed = new URL(url, 'http://localhost');
    const all: Record<string, string> = { ...(body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }), ...headers };
    const raw = body === undefined ? Buffer.alloc(0) : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    return validator.check({ method, path: parsed.pathname, query: parsed.searchParams }, { status, header: (name) => all[name.toLowerCase()], body: raw });
  }

  it('accepts a documented status whose body fits its schema (nullable fields null or set)', () => {
    expect(check('GET', '/v1/things/1', 200, THING)).toEqual([]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, note: 'text', kind: null })).toEqual([]);
    expect(check('GET', '/v1/things/1', 404, ERROR)).toEqual([]);
    expect(check('GET', '/v1/things', 200, { data: [THING], page: 1, size: 20, total: 1, links: [] })).toEqual([]);
  });

  it('refuses an undocumented status', () => {
    expect(check('GET', '/v1/things/1', 403, { ...ERROR, code: 'forbidden' })).toEqual([
      'status 403 is not documented for GET /v1/things/{id} (documented: 200, 404)',
    ]);
  });

  it('refuses a body that breaks the schema: wrong type, missing or undocumented property, enum, format, writeOnly', () => {
    expect(check('GET', '/v1/things/1', 200, { ...THING, id: '1' })).toEqual([expect.stringContaining('body/id must be integer')]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, note: 5 })).toEqual([expect.stringContaining('body/note must be string,null')]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, kind: 'c' })).toEqual([
      expect.stringContaining('body/kind must be equal to one of the allowed values'),
    ]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, created_at: 'yesterday' })).toEqual([
      expect.stringContaining('body/created_at must match format "date-time"'),
    ]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, id: 2 ** 31 })).toEqual([expect.stringContaining('body/id must match format "int32"')]);
    const { note: _note, ...withoutNote } = THING;
    expect(check('GET', '/v1/things/1', 200, withoutNote)).toEqual([expect.stringContaining("must have required property 'note'")]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, secret: 'x' })).toEqual([expect.stringContaining('must NOT have additional properties: secret')]);
    expect(check('GET', '/v1/things/1', 200, { ...THING, password: 'x' })).toEqual([expect.stringContaining('body/password is writeOnly')]);
    expect(check('GET', '/v1/things', 200, { data: [{ ...THING, links: [{ rel: 'self' }] }], page: 1, size: 20, total: 1, links: [] })).toEqual([
      expect.stringContaining("body/data/0/links/0 must have required property 'href'"),
    ]);
    expect(check('GET', '/v1/things/1', 404, { message: 'not found' })).toHaveLength(4);
  });

  it('refuses a content type or a body the response does not document', () => {
    expect(check('GET', '/v1/things/1', 200, '<p>one</p>', { 'content-type': 'text/html' })).toEqual([
      expect.stringContaining('content type text/html is not documented'),
    ]);
    expect(check('GET', '/v1/things/1', 200, '{"id":', {})).toEqual([expect.stringContaining('body is not valid JSON')]);
    expect(check('DELETE', '/v1/things/1', 204)).toEqual([]);
    expect(check('DELETE', '/v1/things/1', 204, {})).toEqual([expect.stringContaining('204 of DELETE /v1/things/{id} documents no body')]);
  });

  it('narrows the required properties to id, links and the requested ones when the operation documents `fields`', () => {
    const sparse = { id: 1, name: 'one', links: THING.links };
    expect(check('GET', '/v1/things/1?fields=name', 200, sparse)).toEqual([]);
    expect(check('GET', '/v1/things?fields=name', 200, { data: [sparse], page: 1, size: 20, total: 1, links: [] })).toEqual([]);
    expect(check('GET', '/v1/things/1?fields=name,note', 200, sparse)).toEqual([expect.stringContaining("must have required property 'note'")]);
    expect(check('GET', '/v1/things/1', 200, sparse)).toHaveLength(3);
    expect(check('GET', '/v1/things/1?fields=name', 200, { ...sparse, name: 7 })).toEqual([expect.stringContaining('body/name must be string')]);
  });

  it('checks documented headers: present when required, valid when present (numbers from their text)', () => {
    expect(check('POST', '/v1/things', 201, THING, { location: '/v1/things/1', 'x-request-id': 'r-1' })).toEqual([]);
    expect(check('POST', '/v1/things', 201, THING, { location: 'things/1', 'x-request-id': 'r-1' })).toEqual([
      expect.stringContaining('header Location: "things/1" must match pattern'),
    ]);
    expect(check('POST', '/v1/things', 201, THING, {})).toEqual(['required header X-Request-Id is missing']);
    expect(check('POST', '/v1/things', 429, ERROR, { 'retry-after': '30' })).toEqual([]);
    expect(check('POST', '/v1/things', 429, ERROR, { 'retry-after': '0' })).toEqual([expect.stringContaining('header Retry-After: "0" must be >= 1')]);
  });

  it('matches literal path segments before templates, and HEAD as GET without a body', () => {
    expect(check('GET', '/v1/things/mine', 200, { mine: true })).toEqual([]);
    expect(check('GET', '/v1/things/mine', 200, THING)).not.toEqual([]);
    expect(check('HEAD', '/v1/things/1', 200, undefined, { 'content-type': 'application/json' })).toEqual([]);
    expect(check('HEAD', '/v1/things/1', 403)).toEqual([expect.stringContaining('status 403 is not documented')]);
  });

  it('lets an undocumented path or method answer only an ErrorResp error; the docs pages are exempt', () => {
    expect(check('GET', '/nowhere', 404, ERROR)).toEqual([]);
    expect(check('PUT', '/v1/things', 405, { ...ERROR, code: 'method_not_allowed' })).toEqual([]);
    expect(check('GET', '/nowhere', 404, { message: 'Cannot GET /nowhere' })).toEqual(
      expect.arrayContaining([expect.stringContaining("must have required property 'error'")]),
    );
    expect(check('GET', '/v1/secret-route', 200, { ok: true })).toEqual(['200 for a path and method the document does not have']);
    expect(check('GET', '/docs/openapi.json', 200, DOCUMENT)).toEqual([]);
    expect(check('GET', '/docs', 401, { error: 'authentication required', code: 'unauthorized', request_id: 'r' })).toEqual([]);
  });
});

describe('createTestApp validates every response against the served document', () => {
  let app: NestExpressApplication;
  let token: string;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    // a service that breaks the document on purpose: a todo without its fields, and a status GET /v1/todos/{id} does not document
    app = await createTestApp({
      override: (builder) =>
        builder.overrideProvider(TodosService).useValue({
          findOne: async (id: number) => {
            if (id === 2) throw new ApiException(409, 'not documented here');
            return { id: 'one', title: 'Buy milk' };
          },
        }),
    });
    token = (await createUser(app)).token;
  });
  afterAll(async () => {
    await app.close();
  });

  it('counts each response and records a violation for a body that breaks its schema and for an undocumented status', async () => {
    const store = violationStore();
    const before = store.validated;
    expect((await api().get('/v1/todos/1').set('Authorization', bearer(token))).status).toBe(200);
    expect((await api().get('/v1/todos/2').set('Authorization', bearer(token))).status).toBe(409);
    expect((await api().get('/v1/todos/x').set('Authorization', bearer(token))).status).toBe(400);
    expect(store.validated - before).toBe(3);
    // taken here, so that afterEach (openapi-assertions.ts) does not fail this test for them
    const violations = store.violations.splice(0);
    expect(violations).toEqual([
      {
        method: 'GET',
        path: '/v1/todos/1',
        status: 200,
        problems: expect.arrayContaining([expect.stringContaining('body/id must be integer'), expect.stringContaining("must have required property 'status'")]),
      },
      { method: 'GET', path: '/v1/todos/2', status: 409, problems: [expect.stringContaining('status 409 is not documented for GET /v1/todos/{id}')] },
    ]);
  });
});
