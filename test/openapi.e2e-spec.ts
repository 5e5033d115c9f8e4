import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { API_VERSION } from '../src/common/openapi/docs.js';
import { DOCUMENT_VERSIONS } from '../src/common/versioning/api-versions.js';
import { createTestApp } from './setup/test-app.js';

/**
 * The OpenAPI documents are complete (issue 5 "Complete", SPEC §8): checked on each version's
 * document the running application serves at /docs/v<n>/openapi.json — the ones
 * `npm run docs:export` writes (issue 8: one document per API version).
 */

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const ERROR_RESP = '#/components/schemas/ErrorResp';
const ALL_SCHEMES = [{ bearer: [] }, { api_key: [] }, { session: [] }];

/** Error bodies an OAuth protocol endpoint may document. */
const PROTOCOL_ERRORS = [ERROR_RESP, '#/components/schemas/OAuthError', '#/components/schemas/OAuthEndpointError'];

describe.each(['1', '2'] as const)('OpenAPI document of API v%s: completeness (SPEC §8, issue 5)', (version) => {
  const v = `/v${version}`;
  /**
   * The OAuth protocol endpoints (issue 7): public, form-urlencoded bodies, RFC 6749 error bodies and
   * HTML pages — the documented exception to `ErrorResp` and JSON bodies.
   */
  const OAUTH_PROTOCOL = [`get ${v}/oauth/authorize`, `post ${v}/oauth/authorize`, `post ${v}/oauth/sign-in`, `post ${v}/oauth/token`, `post ${v}/oauth/revoke`];
  /** Public by SPEC §3: no security requirement. */
  const PUBLIC = [
    `post ${v}/users`,
    `post ${v}/login`,
    `post ${v}/refresh`,
    `post ${v}/sessions`,
    'get /.well-known/jwks.json',
    'get /.well-known/oauth-authorization-server',
    'get /health/live',
    'get /health/ready',
    ...OAUTH_PROTOCOL,
  ];
  /** Operations on the cookie session itself: only the `session` scheme can use them. */
  const COOKIE_ONLY = [`get ${v}/sessions/current`, `delete ${v}/sessions/current`];

  let app: NestExpressApplication;
  let doc: Json;
  let operations: Array<{ at: string; method: string; path: string; op: Json }>;

  /** Follows a local `$ref`. */
  const resolve = (node: Json | undefined): Json | undefined => {
    let current = node;
    while (current?.$ref) current = (current.$ref as string).slice(2).split('/').reduce((n: Json, key: string) => n?.[key], doc);
    return current;
  };

  /** The full schema of a 200 body: the first branch of `anyOf: [X, XSparse]` (operations taking `fields`), else the schema. */
  const full = (schema: Json | undefined): Json | undefined => (schema?.anyOf ? schema.anyOf[0] : schema);

  beforeAll(async () => {
    app = await createTestApp();
    const res = await request(app.getHttpServer()).get(`/docs${v}/openapi.json`);
    expect(res.status).toBe(200);
    doc = res.body;
    operations = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ at: `${method} ${path}`, method, path, op: item[method] })),
    );
  });

  afterAll(async () => {
    await app.close();
  });

  it('is OpenAPI 3.0 with info.version = the API version, a title, a description of auth and lists, and the server /', () => {
    expect(doc.openapi).toMatch(/^3\.0\.\d+$/);
    expect(doc.info.version).toBe(version === '1' ? '1.1.0' : '2.0.0');
    expect(doc.info.version).toBe(DOCUMENT_VERSIONS[version]);
    if (version === '2') expect(doc.info.version).toBe(API_VERSION);
    expect(doc.info.title).toBe('resource-api');
    for (const term of ['Bearer', 'X-API-Key', 'sid', 'page', 'size', 'offset', 'limit', 'sort', 'fields', 'ErrorResp']) {
      expect(doc.info.description).toContain(term);
    }
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['api_key', 'bearer', 'oauth2', 'session']);
  });

  it('documents every resource operation', () => {
    expect(operations.length).toBeGreaterThanOrEqual(46);
    for (const path of ['/users', '/todos', '/tags', '/articles', '/articles/{id}/comments', '/orders', '/api-keys'].map((path) => v + path)) {
      expect(doc.paths).toHaveProperty([path]);
    }
  });

  it('gives every operation a summary and exactly one tag, declared in the document', () => {
    const declared = (doc.tags ?? []).map((tag: Json) => tag.name);
    const bad = operations
      .filter(({ op }) => !(typeof op.summary === 'string' && op.summary.trim() !== '' && op.tags?.length === 1 && declared.includes(op.tags[0])))
      .map(({ at }) => at);
    expect(bad).toEqual([]);
    for (const tag of ['users', 'todos', 'tags', 'articles', 'comments', 'orders', 'api-keys', 'auth', 'sessions']) expect(declared).toContain(tag);
  });

  it('lists no security on public operations and the three schemes (bearer, api_key, session) on protected ones — plus oauth2 with the scope where third parties may call — with 401, 403 and 429', () => {
    expect(doc.security).toBeUndefined();
    for (const { at, method, op } of operations) {
      if (PUBLIC.includes(at)) {
        expect({ at, security: op.security }).toEqual({ at, security: undefined });
        continue;
      }
      const expected = COOKIE_ONLY.includes(at) ? [{ session: [] }] : ALL_SCHEMES;
      const oauth2 = op.security.filter((requirement: Json) => 'oauth2' in requirement);
      expect({ at, security: op.security.filter((requirement: Json) => !('oauth2' in requirement)) }).toEqual({ at, security: expected });
      const scope = new RegExp(`^[a-z]+:${method === 'get' ? 'read' : 'write'}$`);
      expect({ at, oauth2 }).toEqual({ at, oauth2: oauth2.length ? [{ oauth2: [expect.stringMatching(scope)] }] : [] });
      expect({ at, statuses: Object.keys(op.responses) }).toEqual({ at, statuses: expect.arrayContaining(['401', '403', '429']) });
      expect(op.responses['401'].headers).toHaveProperty(['WWW-Authenticate']);
      expect(op.responses['429'].headers).toHaveProperty(['Retry-After']);
    }
    // login throttling
    for (const at of [`post ${v}/login`, `post ${v}/sessions`]) {
      const { op } = operations.find((o) => o.at === at)!;
      expect(op.responses).toHaveProperty(['429']);
    }
  });

  it('describes every parameter with type, required flag, description and example', () => {
    const bad: string[] = [];
    for (const { at, op } of operations) {
      for (const raw of op.parameters ?? []) {
        const parameter = resolve(raw)!;
        const problems = [
          typeof parameter.description === 'string' && parameter.description !== '' ? '' : 'description',
          typeof parameter.required === 'boolean' ? '' : 'required',
          typeof parameter.schema?.type === 'string' ? '' : 'type',
          parameter.example !== undefined || parameter.schema?.example !== undefined ? '' : 'example',
        ].filter(Boolean);
        if (parameter.in === 'path' && parameter.required !== true) problems.push('path parameter not required');
        if (problems.length) bad.push(`${at} ${parameter.name}: ${problems.join(', ')}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('documents the list grammar on every collection GET: paging, sort with its allowed values, filters, fields', () => {
    const lists = operations.filter(({ method, op }) => method === 'get' && resolve(full(op.responses['200']?.content?.['application/json']?.schema))?.properties?.data);
    expect(lists.map(({ path }) => path).sort()).toEqual(['/api-keys', '/articles', '/articles/{id}/comments', '/oauth-clients', '/oauth-grants', '/orders', '/tags', '/todos', '/users'].map((path) => v + path));
    for (const { at, op } of lists) {
      const names = (op.parameters ?? []).map((p: Json) => resolve(p)!.name);
      expect({ at, names }).toEqual({ at, names: expect.arrayContaining(['page', 'size', 'offset', 'limit', 'sort', 'fields']) });
      const sort = op.parameters.map(resolve).find((p: Json) => p.name === 'sort');
      expect(sort.description).toMatch(/Allowed: id, -id/);
      const size = op.parameters.map(resolve).find((p: Json) => p.name === 'size');
      expect(size.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    }
    const todos = operations.find(({ at }) => at === `get ${v}/todos`)!.op.parameters.map(resolve);
    expect(todos.find((p: Json) => p.name === 'status').schema).toMatchObject({ type: 'array', items: { type: 'string', enum: ['pending', 'in_progress', 'done'] } });
  });

  it('gives every request body a named schema and an example, and 413/415 where a body is read', () => {
    const bad: string[] = [];
    for (const { at, method, op } of operations) {
      if (['post', 'put', 'patch'].includes(method)) {
        for (const status of ['400', '413', '415']) if (!op.responses[status]) bad.push(`${at}: no ${status}`);
      }
      if (!op.requestBody) continue;
      const protocol = OAUTH_PROTOCOL.includes(at);
      // the OAuth endpoints take forms and never answer 422 (protocol errors are 400)
      const media = op.requestBody.content?.[protocol ? 'application/x-www-form-urlencoded' : 'application/json'];
      if (!media?.schema?.$ref) bad.push(`${at}: body schema is not a named component`);
      if (media?.example === undefined) bad.push(`${at}: no body example`);
      if (!protocol && !op.responses['422']) bad.push(`${at}: no 422`);
    }
    expect(bad).toEqual([]);
  });

  it('gives every operation a 2xx response (with an example when it has a body) and every 4xx/5xx the ErrorResp schema', () => {
    const bad: string[] = [];
    for (const { at, op } of operations) {
      const entries = Object.entries<Json>(op.responses);
      const success = entries.filter(([status]) => /^2\d\d$/.test(status));
      if (success.length !== 1 && !(OAUTH_PROTOCOL.includes(at) && success.length === 0)) bad.push(`${at}: ${success.length} success responses`);
      const protocol = OAUTH_PROTOCOL.includes(at);
      // the consent and sign-in posts answer redirects; revocation answers 200 without a body (RFC 7009)
      if (protocol && success.length === 0 && !Object.keys(op.responses).some((status) => /^30[23]$/.test(status))) bad.push(`${at}: no success or redirect response`);
      for (const [status, response] of success) {
        const media = response.content?.['application/json'];
        const html = protocol && response.content?.['text/html'] !== undefined;
        const bodiless = status === '204' || (at === `post ${v}/oauth/revoke` && status === '200');
        if (bodiless ? response.content !== undefined : !html && media?.example === undefined) bad.push(`${at} ${status}: example`);
        if (!response.description) bad.push(`${at} ${status}: description`);
      }
      const errors = entries.filter(([status]) => /^[45]\d\d$/.test(status));
      if (!errors.some(([status]) => status.startsWith('4'))) bad.push(`${at}: no 4xx`);
      for (const [status, response] of errors) {
        const media = response.content?.['application/json'];
        if (protocol) {
          // RFC 6749 §5.2 bodies, HTML error pages, or ErrorResp from the shared pipeline
          if (!response.description || (!response.content?.['text/html'] && (!PROTOCOL_ERRORS.includes(media?.schema?.$ref) || media.example === undefined))) bad.push(`${at} ${status}: no OAuth error, HTML page or ErrorResp`);
          continue;
        }
        if (media?.schema?.$ref !== ERROR_RESP || media.example === undefined || !response.description) bad.push(`${at} ${status}: not an ErrorResp with an example`);
        else if (media.example.code === undefined || typeof media.example.request_id !== 'string') bad.push(`${at} ${status}: example is no ErrorResp`);
      }
      if (!op.responses['400'] || !op.responses['500']) bad.push(`${at}: 400 and 500`);
    }
    expect(bad).toEqual([]);
  });

  it('documents Location on creations and X-Request-Id on every response', () => {
    for (const { at, op } of operations) {
      for (const [status, response] of Object.entries<Json>(op.responses)) expect({ at, status, headers: Object.keys(response.headers ?? {}) }).toEqual({ at, status, headers: expect.arrayContaining(['X-Request-Id']) });
      if (op.responses['201'] && at !== `post ${v}/sessions`) expect(op.responses['201'].headers).toHaveProperty(['Location']);
    }
  });

  it('names the component schemas: each resource, its …List, its bodies, ErrorResp and Link', () => {
    const names = Object.keys(doc.components.schemas);
    const expected = ['ErrorResp', 'Link', 'TokenPair', 'LoginBody', 'RefreshBody', 'Session', 'ApiKey', 'ApiKeyList', 'CreatedApiKey', 'CreateApiKeyBody'];
    for (const resource of ['User', 'Todo', 'Article', 'Order']) expected.push(resource, `${resource}List`, `Create${resource}Body`, `Replace${resource}Body`, `Update${resource}Body`);
    expected.push('Tag', 'TagList', 'CreateTagBody', 'UpdateTagBody', 'Comment', 'CommentList', 'CreateCommentBody', 'UpdateCommentBody');
    expect(names).toEqual(expect.arrayContaining(expected));
    for (const name of names) expect(name).toMatch(/^[A-Z][A-Za-z]+$/);
    // every response and request body points at a named component (inline only for the JWKS)
    for (const { at, op } of operations) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema?.anyOf) {
          // a `fields` operation: the full schema or its sparse variant, both named
          expect({ at, status, refs: schema.anyOf.map((branch: Json) => branch.$ref) }).toEqual({
            at,
            status,
            refs: [expect.stringMatching(/^#\/components\/schemas\//), expect.stringMatching(/^#\/components\/schemas\/[A-Za-z]+Sparse(List)?$/)],
          });
        } else if (schema && at !== 'get /.well-known/jwks.json') expect({ at, status, ref: schema.$ref }).toEqual({ at, status, ref: expect.stringMatching(/^#\/components\/schemas\//) });
      }
    }
  });

  it('never uses type: "null" or type arrays; nullable fields say nullable: true', () => {
    const bad: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}[${i}]`));
      const schema = node as Json;
      if (schema.type === 'null' || Array.isArray(schema.type)) bad.push(where);
      for (const [key, value] of Object.entries(schema)) if (key !== 'example' && key !== 'examples') walk(value, `${where}.${key}`);
    };
    walk(doc, '$');
    expect(bad).toEqual([]);
    const schemas = doc.components.schemas;
    expect(schemas.User.properties.age).toMatchObject({ type: 'integer', nullable: true });
    expect(schemas.User.properties.email).toMatchObject({ type: 'string', format: 'email', nullable: true });
    expect(schemas.Todo.properties.content).toMatchObject({ type: 'string', nullable: true });
    expect(schemas.Article.properties.published_at).toMatchObject({ type: 'string', format: 'date-time', nullable: true });
  });

  it('marks password writeOnly and the server-set fields readOnly', () => {
    const schemas = doc.components.schemas;
    for (const [name, schema] of Object.entries<Json>(schemas)) {
      if (schema.properties?.password) expect({ name, password: schema.properties.password }).toEqual({ name, password: expect.objectContaining({ type: 'string', writeOnly: true, format: 'password' }) });
    }
    expect(schemas.User.properties).not.toHaveProperty('password');
    for (const name of ['User', 'Todo', 'Tag', 'Article', 'Comment', 'Order', 'ApiKey']) {
      for (const field of ['id', 'created_at', 'links']) expect({ name, field, readOnly: schemas[name].properties[field]?.readOnly }).toEqual({ name, field, readOnly: true });
    }
    if (version === '2') {
      // v2's breaking change: the author is an embedded UserSummary, read-only in every property
      for (const name of ['Article', 'Comment']) expect(schemas[name].properties.author).toMatchObject({ allOf: [{ $ref: '#/components/schemas/UserSummary' }], readOnly: true });
      expect(schemas.UserSummary.required.sort()).toEqual(['id', 'name', 'username']);
      for (const field of ['id', 'name', 'username']) expect({ field, readOnly: schemas.UserSummary.properties[field].readOnly }).toEqual({ field, readOnly: true });
    }
    for (const [name, field] of [
      ['Todo', 'owner'],
      ['Article', 'author'],
      ['Comment', 'author'],
      ['Comment', 'article'],
      ['Order', 'user'],
      ['Order', 'total_cents'],
      ['User', 'updated_at'],
    ]) {
      expect({ name, field, readOnly: schemas[name].properties[field]?.readOnly }).toEqual({ name, field, readOnly: true });
    }
  });

  it('states enumerations, formats and limits', () => {
    const schemas = doc.components.schemas;
    expect(schemas.Todo.properties.status.enum).toEqual(['pending', 'in_progress', 'done']);
    expect(schemas.Order.properties.status.enum).toEqual(['pending', 'paid', 'shipped', 'delivered', 'cancelled']);
    expect(schemas.Order.properties.currency.enum).toEqual(['EUR', 'USD', 'GBP']);
    expect(schemas.User.properties.role.enum).toEqual(['user', 'admin']);
    expect(schemas.ErrorResp.properties.code.enum).toEqual(expect.arrayContaining(['bad_request', 'validation_failed', 'rate_limited']));
    expect(schemas.Order.properties.total_cents).toMatchObject({ type: 'integer', format: 'int64' });
    expect(schemas.OrderItem.properties.unit_price_cents).toMatchObject({ type: 'integer', format: 'int64' });
    expect(schemas.OrderItemBody.properties.unit_price_cents).toMatchObject({ type: 'integer', format: 'int64', minimum: 0 });
    expect(schemas.Todo.properties.created_at).toMatchObject({ type: 'string', format: 'date-time' });
    expect(schemas.CreateUserBody.properties.age).toMatchObject({ minimum: 0, maximum: 150 });
    expect(schemas.CreateTodoBody.properties.title).toMatchObject({ minLength: 1, maxLength: 200 });
    expect(schemas.CreateOrderBody.properties.items).toMatchObject({ minItems: 1, maxItems: 100 });
    // every integer says its size
    const unsized: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}[${i}]`));
      const schema = node as Json;
      if (schema.type === 'integer' && !['int32', 'int64'].includes(schema.format)) unsized.push(where);
      for (const [key, value] of Object.entries(schema)) if (key !== 'example') walk(value, `${where}.${key}`);
    };
    walk(doc.components, 'components');
    walk(doc.paths, 'paths');
    expect(unsized).toEqual([]);
  });
});
