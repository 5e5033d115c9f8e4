import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { API_VERSION } from '../src/openapi/docs.js';
import { DOCUMENT_VERSIONS } from '../src/common/versioning/api-versions.js';
import { getMetadataStorage } from 'class-validator';
import { fieldsPattern, sortPattern } from '../src/common/decorators/operation.decorators.js';
import { tagsOf } from '../src/common/resources/define-resource.js';
import { REGISTRY, RESOURCES } from '../src/resources.js';
import { TODOS_FIELDS } from '../src/todos/todos.resource.js';
import { bearer, createUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/**
 * The OpenAPI documents are complete (README.md#api-documentation-and-clients): checked on each version's
 * document the running application serves at /docs/v<n>/openapi.json — the ones
 * `npm run docs:export` writes (one document per API version).
 */

type Json = Record<string, any>;

/** The service's scopes, in declaration order. */
const ALL_SCOPES = REGISTRY.scopes;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const ERROR_RESP = '#/components/schemas/ErrorResp';
const ALL_SCHEMES = [{ bearer: [] }, { api_key: [] }, { session: [] }];

/** The declarations (src/resources.ts) that have a list operation, with their field tables (enum filters with the registry's lists). */
const LISTED = RESOURCES.flatMap((resource) => ('fields' in resource ? [{ name: resource.name, fields: REGISTRY.listSpec(resource.fields) }] : []));

/** Error bodies an OAuth protocol endpoint may document. */
const PROTOCOL_ERRORS = [ERROR_RESP, '#/components/schemas/OAuthError', '#/components/schemas/OAuthEndpointError'];

describe.each(['1', '2'] as const)('OpenAPI document of API v%s: completeness (README.md#api-documentation-and-clients)', (version) => {
  const v = `/v${version}`;
  /**
   * The OAuth protocol endpoints: public, form-urlencoded bodies, RFC 6749 error bodies and
   * HTML pages — the documented exception to `ErrorResp` and JSON bodies.
   */
  const OAUTH_PROTOCOL = [
    `get ${v}/oauth/authorize`,
    `post ${v}/oauth/authorize`,
    `post ${v}/oauth/sign-in`,
    `post ${v}/oauth/token`,
    `post ${v}/oauth/revoke`,
  ];
  /** Public operations (docs/authentication.md#overview): no security requirement. */
  const PUBLIC = [
    `post ${v}/users`,
    `post ${v}/login`,
    `post ${v}/refresh`,
    `post ${v}/sessions`,
    `post ${v}/password-reset-requests`,
    `post ${v}/password-resets`,
    `post ${v}/email-verifications`,
    `post ${v}/login-challenges`,
    'get /.well-known/jwks.json',
    'get /.well-known/oauth-authorization-server',
    'get /health/live',
    'get /health/ready',
    'get /',
    ...OAUTH_PROTOCOL,
  ];
  /**
   * The password sign-ins answer 202 with a two-factor challenge for an account with it on, beside
   * their success; completing the challenge answers what the sign-in it came from would have (200
   * a token pair, 201 a session). Each status has one schema, so the status tells a client the step.
   */
  const TWO_STEP_SIGN_IN: Record<string, string[]> = {
    [`post ${v}/login`]: ['200', '202'],
    [`post ${v}/sessions`]: ['201', '202'],
    [`post ${v}/login-challenges`]: ['200', '201'],
  };
  /** Operations on the cookie session itself: only the `session` scheme can use them. */
  const COOKIE_ONLY = [`get ${v}/sessions/current`, `delete ${v}/sessions/current`];

  let app: NestExpressApplication;
  let doc: Json;
  let operations: Array<{ at: string; method: string; path: string; op: Json }>;

  /** Follows a local `$ref`. */
  const resolve = (node: Json | undefined): Json | undefined => {
    let current = node;
    while (current?.$ref)
      current = (current.$ref as string)
        .slice(2)
        .split('/')
        .reduce((n: Json, key: string) => n?.[key], doc);
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
  });

  it('names every operation for a client generator: unique camelCase ids, a resource operation’s from its kind and declaration (listTodos, getTodo, …), the same in both versions', () => {
    const ids = operations.map(({ op }) => op.operationId as string);
    expect(ids.filter((id) => !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    const byRoute = Object.fromEntries(operations.map(({ method, path, op }) => [`${method} ${path.replace(/^\/v\d+/, '')}`, op.operationId]));
    expect(byRoute).toMatchObject({
      'get /todos': 'listTodos',
      'post /todos': 'createTodo',
      'get /todos/{id}': 'getTodo',
      'put /todos/{id}': 'replaceTodo',
      'patch /todos/{id}': 'updateTodo',
      'delete /todos/{id}': 'deleteTodo',
      'get /articles/{id}/comments': 'listComments',
      'get /webhooks/{id}/deliveries': 'listWebhookDeliveries',
      'post /webhooks/{id}/secret-rotations': 'createWebhookSecretRotation',
      'get /oauth-clients': 'listOAuthClients',
      'post /login': 'login',
      'post /refresh': 'refreshToken',
      'post /password-reset-requests': 'requestPasswordReset',
      'post /password-resets': 'resetPassword',
      'post /email-verifications': 'verifyEmail',
      'post /email-verification-requests': 'requestEmailVerification',
      'post /totp-enrolments': 'startTotpEnrolment',
      'post /totp-confirmations': 'confirmTotpEnrolment',
      'post /totp-deactivations': 'deactivateTotp',
      'post /login-challenges': 'completeLoginChallenge',
      'get /sessions/current': 'getCurrentSession',
      'post /oauth/token': 'issueToken',
      'get /health/ready': 'getReadiness',
      'get /': 'getRoot',
    });
    // every GET/POST of a collection and GET/PUT/PATCH/DELETE of a member is named by the rule
    // ending a login is its deletion: endLogin, endAllLogins
    const verbs: Record<string, string> = { get: 'get|list', post: 'create', put: 'replace', patch: 'update', delete: 'delete|end' };
    const misnamed = operations.filter(
      ({ method, path, op }) =>
        /\/\{[a-z_]+\}$|\/[a-z-]+$/.test(path) &&
        !/\/(current|login|refresh|logout|password-reset-requests|password-resets|email-verifications|email-verification-requests|totp-enrolments|totp-confirmations|totp-deactivations|login-challenges|sign-in|token|revoke|authorize|live|ready|jwks\.json|oauth-authorization-server)$/.test(
          path,
        ) &&
        !new RegExp(`^(${verbs[method]})[A-Z]`).test(op.operationId),
    );
    expect(misnamed.map(({ at, op }) => `${at}: ${op.operationId}`)).toEqual([]);
  });

  it('lists exactly the tags of the declarations in src/resources.ts, described and in their order: every operation belongs to a declared resource, every declaration has operations', () => {
    expect(doc.tags).toEqual(tagsOf(RESOURCES));
  });

  it('offers exactly the scopes of the declarations with scopes in the oauth2 scheme, and requires only those', () => {
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).toEqual(ALL_SCOPES);
    const required = operations.flatMap(({ op }) => (op.security ?? []).flatMap((requirement: Json) => requirement.oauth2 ?? []));
    expect(required.length).toBeGreaterThan(30);
    expect(required.filter((scope: string) => !ALL_SCOPES.includes(scope))).toEqual([]);
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
    // every caller is rate limited (docs/limits.md#rates): 429 and the five rate-limit headers on every operation but the health probes
    const LIMIT_HEADERS = ['RateLimit-Policy', 'RateLimit', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
    for (const { at, op } of operations) {
      if (at.includes('/health/')) {
        expect({ at, statuses: Object.keys(op.responses) }).toEqual({ at, statuses: expect.not.arrayContaining(['429']) });
        continue;
      }
      expect({ at, headers: Object.keys(op.responses['429']?.headers ?? {}) }).toEqual({
        at,
        headers: expect.arrayContaining(['Retry-After', ...LIMIT_HEADERS]),
      });
      const success = Object.keys(op.responses).find((status) => /^[23]/.test(status))!;
      expect({ at, success, headers: Object.keys(op.responses[success].headers ?? {}) }).toEqual({
        at,
        success,
        headers: expect.arrayContaining(LIMIT_HEADERS),
      });
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
    const lists = operations.filter(
      ({ method, op }) => method === 'get' && resolve(full(op.responses['200']?.content?.['application/json']?.schema))?.properties?.data?.type === 'array',
    );
    // one list operation per declaration with a field table, documenting exactly its grammar
    expect(lists.map(({ op }) => op.tags[0]).sort()).toEqual(LISTED.map(({ name }) => name).sort());
    for (const { name, fields } of LISTED) {
      const { op } = lists.find(({ op }) => op.tags[0] === name)!;
      const parameters: Json[] = op.parameters.map(resolve);
      const byName = (parameter: string) => parameters.find((p) => p.name === parameter);
      const query = parameters.filter((p) => p.in === 'query').map((p) => p.name);
      const filters = query.filter((p) => !['page', 'size', 'offset', 'limit', 'cursor', 'sort', 'fields', 'q', 'expand'].includes(p) && !/\[/.test(p));
      // `expand` exactly where the field table declares paths (docs/lists.md#expanding-related-resources-expand)
      expect({ name, expand: query.includes('expand') }).toEqual({ name, expand: fields.expand !== undefined });
      expect({ name, filters }).toEqual({ name, filters: Object.keys(fields.filters) });
      // `q` exactly where the field table searches (docs/lists.md#full-text-search-q), with `relevance` among the sort keys
      expect({ name, q: query.includes('q'), relevance: Object.hasOwn(fields.sortable, 'relevance') }).toEqual({
        name,
        q: fields.search !== undefined,
        relevance: fields.search !== undefined,
      });
      // every range operator of every ordered field (docs/lists.md#range-filters), then every filter operator each
      // field declares (docs/lists.md#filter-operators), and nothing else in brackets
      const ranges = Object.keys(fields.ranges ?? {}).flatMap((field) => ['gte', 'gt', 'lte', 'lt'].map((op) => `${field}[${op}]`));
      const operators = Object.entries(fields.operators ?? {}).flatMap(([field, { ops }]) => ops.map((op) => `${field}[${op}]`));
      expect({ name, ranges: query.filter((p) => /\[/.test(p)) }).toEqual({ name, ranges: [...ranges, ...operators] });
      expect({ name, cursor: byName('cursor')?.schema.type, prefer: parameters.find((p) => p.in === 'header' && p.name === 'Prefer')?.schema.enum }).toEqual({
        name,
        cursor: 'string',
        prefer: ['count=exact', 'count=estimated', 'count=none'],
      });
      expect({ name, sort: byName('sort')?.schema.pattern }).toEqual({ name, sort: sortPattern(Object.keys(fields.sortable)) });
      expect({ name, fields: byName('fields')?.schema.pattern }).toEqual({ name, fields: fieldsPattern(fields.selectable) });
      for (const [filter, spec] of Object.entries(fields.filters)) {
        if (spec.type === 'enum') expect({ name, filter, values: byName(filter)?.schema.items.enum }).toEqual({ name, filter, values: spec.values });
      }
    }
    for (const { at, op } of lists) {
      const names = (op.parameters ?? []).map((p: Json) => resolve(p)!.name);
      expect({ at, names }).toEqual({ at, names: expect.arrayContaining(['page', 'size', 'offset', 'limit', 'sort', 'fields']) });
      const sort = op.parameters.map(resolve).find((p: Json) => p.name === 'sort');
      expect(sort.description).toMatch(/Allowed: id, -id/);
      const size = op.parameters.map(resolve).find((p: Json) => p.name === 'size');
      expect(size.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    }
    const todos = operations.find(({ at }) => at === `get ${v}/todos`)!.op.parameters.map(resolve);
    expect(todos.find((p: Json) => p.name === 'status').schema).toMatchObject({
      type: 'array',
      items: { type: 'string', enum: ['pending', 'in_progress', 'done'] },
    });
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
      const expected = TWO_STEP_SIGN_IN[at];
      if (expected) {
        if (success.map(([status]) => status).join() !== expected.join()) bad.push(`${at}: success responses ${success.map(([status]) => status).join()}`);
      } else if (success.length !== 1 && !(OAUTH_PROTOCOL.includes(at) && success.length === 0)) bad.push(`${at}: ${success.length} success responses`);
      const protocol = OAUTH_PROTOCOL.includes(at);
      // the consent and sign-in posts answer redirects; revocation answers 200 without a body (RFC 7009)
      if (protocol && success.length === 0 && !Object.keys(op.responses).some((status) => /^30[23]$/.test(status)))
        bad.push(`${at}: no success or redirect response`);
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
          if (!response.description || (!response.content?.['text/html'] && (!PROTOCOL_ERRORS.includes(media?.schema?.$ref) || media.example === undefined)))
            bad.push(`${at} ${status}: no OAuth error, HTML page or ErrorResp`);
          continue;
        }
        if (media?.schema?.$ref !== ERROR_RESP || media.example === undefined || !response.description)
          bad.push(`${at} ${status}: not an ErrorResp with an example`);
        else if (media.example.code === undefined || typeof media.example.request_id !== 'string') bad.push(`${at} ${status}: example is no ErrorResp`);
      }
      if (!op.responses['400'] || !op.responses['500']) bad.push(`${at}: 400 and 500`);
    }
    expect(bad).toEqual([]);
  });

  it('documents Location on creations and X-Request-Id on every response', () => {
    for (const { at, op } of operations) {
      for (const [status, response] of Object.entries<Json>(op.responses))
        expect({ at, status, headers: Object.keys(response.headers ?? {}) }).toEqual({ at, status, headers: expect.arrayContaining(['X-Request-Id']) });
      // a session is no resource with an address: it is the cookie
      if (op.responses['201'] && at !== `post ${v}/sessions` && at !== `post ${v}/login-challenges`)
        expect(op.responses['201'].headers).toHaveProperty(['Location']);
    }
  });

  it('names the component schemas: each resource, its …List, its bodies, ErrorResp and Link', () => {
    const names = Object.keys(doc.components.schemas);
    const expected = ['ErrorResp', 'Link', 'TokenPair', 'LoginBody', 'RefreshBody', 'Session', 'ApiKey', 'ApiKeyList', 'CreatedApiKey', 'CreateApiKeyBody'];
    for (const resource of ['User', 'Todo', 'Article', 'Order'])
      expected.push(resource, `${resource}List`, `Create${resource}Body`, `Replace${resource}Body`, `Update${resource}Body`);
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
        } else if (schema && at !== 'get /.well-known/jwks.json')
          expect({ at, status, ref: schema.$ref }).toEqual({ at, status, ref: expect.stringMatching(/^#\/components\/schemas\//) });
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
      if (schema.properties?.password)
        expect({ name, password: schema.properties.password }).toEqual({
          name,
          password: expect.objectContaining({ type: 'string', writeOnly: true, format: 'password' }),
        });
    }
    expect(schemas.User.properties).not.toHaveProperty('password');
    for (const name of ['User', 'Todo', 'Tag', 'Article', 'Comment', 'Order', 'ApiKey']) {
      for (const field of ['id', 'created_at', 'links'])
        expect({ name, field, readOnly: schemas[name].properties[field]?.readOnly }).toEqual({ name, field, readOnly: true });
    }
    if (version === '2') {
      // v2's breaking change: the author is an embedded UserSummary, read-only in every property
      for (const name of ['Article', 'Comment'])
        expect(schemas[name].properties.author).toMatchObject({ allOf: [{ $ref: '#/components/schemas/UserSummary' }], readOnly: true });
      expect(schemas.UserSummary.required.sort()).toEqual(['id', 'name', 'username']);
      for (const field of ['id', 'name', 'username'])
        expect({ field, readOnly: schemas.UserSummary.properties[field].readOnly }).toEqual({ field, readOnly: true });
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

  describe('as strict as the service (README.md#api-documentation-and-clients: closed bodies, every length and pattern rule)', () => {
    /** The JSON request body schemas of the document, by operation. */
    const jsonBodies = () =>
      operations.flatMap(({ at, op }) =>
        ['application/json', 'application/merge-patch+json']
          .filter((type) => op.requestBody?.content?.[type])
          .map((type) => ({ at: `${at} ${type}`, schema: op.requestBody.content[type].schema as Json })),
      );

    /** Every object schema reachable from `root` (through `$ref`s, properties, items, compositions), with where it was met. */
    function objectSchemas(root: Json, where: string): Array<{ where: string; schema: Json }> {
      const found: Array<{ where: string; schema: Json }> = [];
      const seen = new Set<Json>();
      const walk = (node: unknown, at: string) => {
        if (!node || typeof node !== 'object' || Array.isArray(node)) return;
        const schema = resolve(node as Json)!;
        if (seen.has(schema)) return;
        seen.add(schema);
        if (schema.type === 'object' || schema.properties) found.push({ where: at, schema });
        for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) walk(property, `${at}.${name}`);
        walk(schema.items, `${at}[]`);
        for (const key of ['allOf', 'anyOf', 'oneOf']) (schema[key] ?? []).forEach((part: Json, i: number) => walk(part, `${at}.${key}[${i}]`));
      };
      walk(root, where);
      return found;
    }

    it('a: closes every JSON request body and every object nested in it, PATCH (merge-patch) bodies included', () => {
      const bodies = jsonBodies();
      expect(bodies.filter(({ at }) => at.endsWith('merge-patch+json')).length).toBeGreaterThanOrEqual(6);
      const open = bodies.flatMap(({ at, schema }) => objectSchemas(schema, at)).filter(({ schema }) => schema.additionalProperties !== false);
      expect(open.map(({ where }) => where)).toEqual([]);
      // nested: the order lines
      expect(schemas().OrderItemBody.additionalProperties).toBe(false);
    });

    const schemas = () => doc.components.schemas as Record<string, Json>;

    it('b: every required string of a request body with a presence rule has minLength ≥ 1, and every string a maxLength, enum or format', () => {
      const bad: string[] = [];
      for (const { at, schema } of jsonBodies()) {
        for (const { where, schema: object } of objectSchemas(schema, at)) {
          for (const [name, raw] of Object.entries<Json>(object.properties ?? {})) {
            const property = resolve(raw)!;
            if (property.type !== 'string') continue;
            if ((object.required ?? []).includes(name) && !(property.minLength >= 1) && !property.enum) bad.push(`${where}.${name}: no minLength`);
            if (property.maxLength === undefined && !property.enum) bad.push(`${where}.${name}: no maxLength`);
          }
        }
      }
      expect(bad).toEqual([]);
    });

    it('b: states the rule of every length, pattern, presence and array-size validator of every DTO in its schema', () => {
      const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Function, unknown> };
      const bad: string[] = [];
      let checked = 0;
      for (const type of storage.validationMetadatas.keys()) {
        const names = (Reflect.getOwnMetadata('swagger/apiSchema', type) ?? []) as Array<{ name?: string }>;
        const schema = schemas()[names[names.length - 1]?.name ?? type.name];
        if (!schema?.properties) continue;
        for (const rule of getMetadataStorage().getTargetValidationMetadatas(type, '', true, false)) {
          const raw = schema.properties[rule.propertyName];
          if (!raw || raw.$ref || raw.allOf) continue;
          const property = rule.each ? raw.items : raw;
          const [first, second] = rule.constraints ?? [];
          const where = `${type.name}.${rule.propertyName} ${rule.name}`;
          const expectations: Record<string, () => boolean> = {
            isNotEmpty: () => property.type !== 'string' || property.minLength >= 1,
            minLength: () => property.minLength >= first,
            maxLength: () => property.maxLength <= first,
            isLength: () => property.minLength >= first && (second === undefined || property.maxLength <= second),
            matches: () =>
              (first instanceof RegExp && first.flags.replace('u', '') !== '') || property.pattern === (first instanceof RegExp ? first.source : String(first)),
            min: () => property.minimum >= first,
            max: () => property.maximum <= first,
            arrayMinSize: () => property.minItems >= first,
            arrayMaxSize: () => property.maxItems <= first,
            arrayUnique: () => property.uniqueItems === true,
            isEmail: () => property.format === 'email',
            isDateString: () => property.format === 'date-time',
          };
          const expectation = expectations[rule.name ?? ''];
          if (!expectation) continue;
          checked += 1;
          if (!expectation()) bad.push(`${where}: ${JSON.stringify(property)}`);
        }
      }
      expect(checked).toBeGreaterThan(40);
      expect(bad).toEqual([]);
      // the rules that used to be missing: the client name, the order line's sku
      expect(schemas().CreateOAuthClientBody.properties.name).toMatchObject({ minLength: 1, maxLength: 100 });
      expect(schemas().OrderItemBody.properties.sku).toMatchObject({ minLength: 1, maxLength: 64 });
    });

    it('c: a read or list taking fields answers anyOf the full schema and its …Sparse variant (same properties, only id and links required, closed)', () => {
      const withFields = operations.filter(({ op }) => (op.parameters ?? []).some((p: Json) => resolve(p)!.name === 'fields'));
      expect(withFields.length).toBeGreaterThanOrEqual(16);
      for (const { at, op } of withFields) {
        const schema = op.responses['200'].content['application/json'].schema;
        expect({ at, branches: schema.anyOf?.length }).toEqual({ at, branches: 2 });
        const [whole, sparse] = schema.anyOf.map((branch: Json) => resolve(branch)!);
        expect(schema.anyOf[1].$ref).toBe(`${schema.anyOf[0].$ref.replace(/List$/, '')}Sparse${schema.anyOf[0].$ref.endsWith('List') ? 'List' : ''}`);
        // a list envelope's `data` is an array (an event's `data` is an object)
        const isList = whole.properties.data?.type === 'array';
        const [wholeItem, sparseItem] = isList ? [resolve(whole.properties.data.items)!, resolve(sparse.properties.data.items)!] : [whole, sparse];
        if (isList) expect(sparse.required).toEqual(whole.required);
        expect(Object.keys(sparseItem.properties)).toEqual(Object.keys(wholeItem.properties));
        expect({ at, required: [...sparseItem.required].sort() }).toEqual({ at, required: ['id', 'links'] });
        expect(sparseItem.additionalProperties).toBe(false);
      }
    });

    it('d: states the paging-style rule on page, size, offset and limit, and the fields grammar (with a pattern)', () => {
      const list = operations.find(({ at }) => at === `get ${v}/todos`)!.op.parameters.map(resolve) as Json[];
      const byName = (name: string) => list.find((p) => p.name === name)!;
      for (const name of ['page', 'size']) expect(byName(name).description).toMatch(/not combinable with offset\/limit.*→ 400/);
      for (const name of ['offset', 'limit']) expect(byName(name).description).toMatch(/not combinable with page\/size.*→ 400/);
      const fields = byName('fields');
      expect(fields.description).toMatch(/comma-separated/);
      expect(fields.description).toMatch(/unknown name.*→ 400/);
      expect(fields.schema.pattern).toBe(fieldsPattern(TODOS_FIELDS.selectable));
      const pattern = new RegExp(fields.schema.pattern);
      for (const good of ['title', 'id,title', 'title,status,title', ' title , status ']) expect({ good, ok: pattern.test(good) }).toEqual({ good, ok: true });
      for (const bad of ['', 'title,', ',title', 'title,,status', 'bogus', 'title,bogus']) expect({ bad, ok: pattern.test(bad) }).toEqual({ bad, ok: false });
    });

    it('d: the service agrees with the fields pattern and the paging rule', async () => {
      const admin = await createUser(app, { role: 'admin' });
      const get = (query: string) => request(app.getHttpServer()).get(`${v}/todos?${query}`).set('Authorization', bearer(admin.token));
      const pattern = new RegExp(fieldsPattern(TODOS_FIELDS.selectable));
      for (const value of ['title', 'title,status,title', ' title , status ', 'title,', 'bogus', 'title,,status']) {
        const res = await get(`fields=${encodeURIComponent(value)}`);
        expect({ value, status: res.status }).toEqual({ value, status: pattern.test(value) ? 200 : 400 });
      }
      for (const mixed of ['page=1&offset=0', 'size=5&limit=5', 'page=2&limit=5']) {
        const res = await get(mixed);
        expect({ mixed, status: res.status }).toEqual({ mixed, status: 400 });
        expect(res.body).toEqual({ ...errorBody('bad_request'), details: expect.any(Array) });
      }
    });

    it('types every path parameter as the service parses it: a GET sent with each parameter’s documented example is never a 400', async () => {
      const admin = await createUser(app, { role: 'admin' });
      const reads = operations.filter(({ method, path }) => method === 'get' && path.includes('{'));
      expect(reads.map(({ path }) => path)).toEqual(
        expect.arrayContaining([`${v}/events/{id}`, `${v}/todos/{id}`, `${v}/articles/{id}/comments/{comment_id}`]),
      );
      const refused: string[] = [];
      for (const { path, op } of reads) {
        const params: Json[] = (op.parameters ?? []).filter((parameter: Json) => parameter.in === 'path');
        const url = params.reduce(
          (at: string, parameter: Json) => at.replace(`{${parameter.name}}`, encodeURIComponent(String(parameter.schema.example ?? parameter.example))),
          path,
        );
        expect({ url, placeholders: /\{/.test(url) }).toEqual({ url, placeholders: false });
        const res = await request(app.getHttpServer()).get(url).set('Authorization', bearer(admin.token));
        if (res.status === 400) refused.push(`GET ${url}: ${JSON.stringify(res.body)}`);
      }
      expect(refused).toEqual([]);
    });

    it('e: a POST body without one of its required properties is 400 "<field> is required", for every such operation', async () => {
      const admin = await createUser(app, { role: 'admin' });
      const posts = operations.filter(
        ({ method, path, op }) =>
          method === 'post' && !path.includes('{') && op.requestBody?.content?.['application/json'] && !/\/(login|refresh|sessions)$/.test(path),
      );
      expect(posts.map(({ path }) => path)).toEqual(expect.arrayContaining([`${v}/oauth-clients`, `${v}/api-keys`, `${v}/orders`, `${v}/todos`]));
      const bad: string[] = [];
      for (const { path, op } of posts) {
        const media = op.requestBody.content['application/json'];
        const required: string[] = resolve(media.schema)!.required ?? [];
        for (const field of required) {
          const { [field]: _dropped, ...body } = media.example as Json;
          const res = await request(app.getHttpServer()).post(path).set('Authorization', bearer(admin.token)).send(body);
          const detail = res.body.details?.find((d: Json) => d.field === field);
          if (res.status !== 400 || detail?.message !== `${field} is required`)
            bad.push(`POST ${path} without ${field}: ${res.status} ${JSON.stringify(res.body.details)}`);
        }
      }
      expect(bad).toEqual([]);
    });
  });
});
