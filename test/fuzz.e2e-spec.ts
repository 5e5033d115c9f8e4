import { afterAll, describe, expect, it } from '@jest/globals';
import type { OpenAPIObject } from '@nestjs/swagger';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { AuthService } from '../src/auth/auth.service.js';
import { buildOpenApiDocuments } from '../src/openapi/docs.js';
import { EventRecord } from '../src/events/event.entity.js';
import { OAuthGrant } from '../src/oauth/oauth-grant.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { registerClient } from './factories/oauth.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { ResponseValidator, violationStore } from './setup/openapi-validation.js';
import { asParsed, flatten, hostileValue, RawJson, type Schema, type SchemaContext, toJsonText, validValue } from './setup/schema-arbitrary.js';
import { createTestApp } from './setup/test-app.js';

/**
 * Property-based fuzzing of every operation of the served OpenAPI documents (v1 and v2), on the
 * real application and database (docs/wire.md, docs/errors.md#documentation: bad input always gets a documented 4xx with an
 * `ErrorResp`, never a 5xx).
 *
 * For each operation, two properties (fast-check, seeded): `schema-valid` requests derived from
 * the parameter and request-body schemas (test/setup/schema-arbitrary.ts), and `hostile` ones —
 * a valid request with a broken body (wrong types, missing or extra properties, NUL, lone
 * surrogates, over-long and ~100 KiB strings, deep nesting, extreme numbers), hostile query values
 * (`__proto__`, SQL-ish text, 10,000-character values, duplicates, unknown names), hostile path ids
 * (0, negative, huge, non-numeric), invalid UTF-8, a wrong media type or content encoding. Each
 * generated request is sent as an admin and as an ordinary user (bearer tokens), with path ids
 * resolved to real rows (the caller's own, another user's, a fresh one) or to missing ones.
 *
 * Every response must: not be a 5xx; be true to the document (status documented for the
 * operation, body valid for it — checked by the response validator of test/setup/openapi-validation.ts,
 * read here right after each response); carry an `ErrorResp` when it is an error (the OAuth
 * protocol endpoints answer RFC 6749 bodies, as documented); never refuse a schema-valid request
 * with 400; never accept NUL or an unknown property (`__proto__`, `constructor`, …) with a 2xx;
 * and a successful write (201 with `Location`, PUT/PATCH 200) must read back unchanged through the
 * documented GET (strings byte-identical).
 *
 * Left out: schema-valid requests carry no list `cursor` (a token the server signs; a generated one
 * is refused with 400 by design — hostile requests and test/lists.e2e-spec.ts send them). `GET`/`DELETE /v{n}/sessions/current` are fuzzed with bearer
 * tokens only (cookie operations: they answer 401/403). The OAuth browser form flows
 * (`/oauth/authorize`, `/oauth/sign-in`, `/oauth/token`, `/oauth/revoke`) get generated forms and
 * queries but never reach a consent (that needs a signed-in browser session and its CSRF token);
 * test/oauth*.e2e-spec.ts cover those flows end to end.
 *
 * FUZZ_RUNS (cases per operation and property, default {@link DEFAULT_RUNS}) and FUZZ_SEED (default
 * {@link DEFAULT_SEED}) make a run reproducible; a failure prints the seed, fast-check's path and the
 * exact request (method, URL, headers, body).
 */

const DEFAULT_SEED = 20261123;
const DEFAULT_RUNS = 4;
const SEED = Number(process.env.FUZZ_SEED ?? DEFAULT_SEED);
const RUNS = Number(process.env.FUZZ_RUNS ?? DEFAULT_RUNS);

type Json = Record<string, any>;
type Role = 'admin' | 'user';
type Mode = 'schema-valid' | 'hostile';

/** A path id before it is resolved against the fixtures. */
type IdChoice = { kind: 'own' | 'other' | 'fresh' | 'missing' } | { kind: 'literal'; raw: string };

/** A value filled in when the request is sent (fixtures that only exist then). */
class Sym {
  constructor(readonly name: 'refresh-token' | 'own-username' | 'client-id') {}
}

/** One generated request, before path ids and symbols are resolved. */
interface GeneratedRequest {
  ids: IdChoice;
  /** Query pairs, both already percent-encoded. */
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body?: { contentType: string; value: unknown } | { contentType: string; bytes: Buffer; note: string };
}

/** A request as sent (for the failure report). */
interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Received {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** Keys no operation accepts: a 2xx for a body carrying one of them is a failure (docs/writes.md#read-only-and-unknown-fields). */
const NEVER_ACCEPTED_KEYS = new Set(['__proto__', 'constructor', 'prototype', 'is_admin', 'password_hash', 'token_hash', 'unknown_field']);
const OAUTH_PROTOCOL = /\/oauth\/(authorize|sign-in|token|revoke)$/;
/** Path ids that are not positive integers, or beyond the documented maximum (docs/wire.md#ids → 400), and a few that look like attacks. */
const HOSTILE_IDS = [
  '0',
  '-1',
  '2147483648',
  '99999999999999999999999',
  'abc',
  '1.5',
  '1e3',
  '0x1',
  '%00',
  '%ED%A0%80',
  '%20',
  'null',
  '__proto__',
  'constructor',
  "1'%20OR%201=1--",
  '1;drop',
  '+1',
  '01',
  'x'.repeat(10_000),
];
/** Query values that break or abuse the list grammar (docs/lists.md). Percent-encoded. */
const HOSTILE_QUERY_VALUES = [
  '__proto__',
  'constructor',
  "'%20OR%201=1--",
  'id;drop',
  'x'.repeat(10_000),
  '',
  '-',
  ',',
  'id,,id',
  '-id,-id',
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%FF',
  '1e308',
  '-0',
  '9007199254740993',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '2147483648',
  '[object%20Object]',
  'title%5B%5D',
];
const HOSTILE_QUERY_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'sort[gte]',
  'page[]',
  'fields[0]',
  'status[ne]',
  'x'.repeat(2_000),
  'access_token',
  '%00',
  'unknown',
];

const encode = (value: unknown) => encodeURIComponent(String(value));

// ---------------------------------------------------------------------------------------------
// The application, its documents and the fixtures (top-level: the operations become tests).

const app = await createTestApp();
const server = app.getHttpServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const documents = (await buildOpenApiDocuments(app)) as Record<string, OpenAPIObject>;
const validators = Object.fromEntries(Object.entries(documents).map(([version, document]) => [version, new ResponseValidator(document)]));

afterAll(async () => {
  await app.close();
});

const admin = await createUser(app, { role: 'admin' });
const user = await createUser(app);
const other = await createUser(app);
const callers: Record<Role, CreatedUser> = { admin, user };
const tagNames = await Promise.all([createTag(app), createTag(app), createTag(app)]).then((tags) => tags.map((tag) => tag.name));
const oauthClient = await registerClient(app, admin);

/** Sends one request to the listening application. */
async function send(request: SentRequest): Promise<Received> {
  const res = await fetch(`${base}${request.url}`, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual' });
  const text = await res.text();
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A fixture write through the API; throws unless it answers `expected`. */
async function api(method: string, url: string, token: string, body?: unknown, expected = 201): Promise<Json> {
  const res = await send({
    method,
    url,
    headers: { authorization: bearer(token), 'content-type': 'application/json' },
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
  });
  if (res.status !== expected) throw new Error(`fixture ${method} ${url} answered ${res.status}: ${res.text}`);
  return res.json as Json;
}

type Kind = 'todos' | 'orders' | 'articles' | 'comments' | 'tags' | 'users' | 'api-keys' | 'oauth-clients' | 'oauth-grants' | 'events';

/** A well-formed event id no event has (event ids are `evt_` + 32 hex digits, not integers). */
const MISSING_EVENT_ID = `evt_${'f'.repeat(32)}`;

/** Creates a row of `kind` owned by `owner`; returns the path ids that address it. */
async function createRow(kind: Kind, owner: CreatedUser): Promise<Record<string, number | string>> {
  switch (kind) {
    case 'todos':
      return { id: (await api('POST', '/v1/todos', owner.token, { title: 'fuzz fixture', content: 'fixture' })).id as number };
    case 'orders':
      return {
        id: (await api('POST', '/v1/orders', owner.token, { items: [{ sku: 'FUZZ-1', quantity: 2, unit_price_cents: 150 }], currency: 'EUR' })).id as number,
      };
    case 'articles':
      return { id: (await createArticle(app, owner.user, { status: 'published' }, [])).id };
    case 'comments': {
      const article = await createArticle(app, owner.user, { status: 'published' });
      return { id: article.id, comment_id: (await createComment(app, article, owner.user)).id };
    }
    case 'tags':
      return { id: (await createTag(app)).id };
    case 'users':
      return { id: (await createUser(app)).user.id };
    case 'api-keys':
      return { id: (await api('POST', '/v1/api-keys', owner.token, { name: 'fuzz fixture', scopes: ['todos:read'] })).id as number };
    case 'oauth-clients':
      return { id: (await registerClient(app, admin)).id };
    case 'events': {
      // a write of the owner's emits an event of theirs; its id is the path id
      await api('POST', '/v1/todos', owner.token, { title: 'fuzz fixture' });
      const event = await app
        .get(DataSource)
        .getRepository(EventRecord)
        .findOneOrFail({ where: { owner_id: owner.user.id }, order: { id: 'DESC' } });
      return { id: event.event_id };
    }
    case 'oauth-grants': {
      const now = new Date();
      const repo = app.get(DataSource).getRepository(OAuthGrant);
      const saved = await repo.save(
        repo.create({
          user_id: owner.user.id,
          oauth_client_id: oauthClient.id,
          scopes: 'todos:read',
          family_id: randomUUID(),
          created_at: now,
          last_used_at: now,
        }),
      );
      return { id: saved.id };
    }
  }
}

const rowCache = new Map<string, Record<string, number | string>>();

/** A cached row of `kind` owned by `owner` (created the first time). */
async function cachedRow(kind: Kind, owner: CreatedUser): Promise<Record<string, number | string>> {
  const key = `${kind} ${owner.user.id}`;
  let row = rowCache.get(key);
  if (!row) {
    row = await createRow(kind, owner);
    rowCache.set(key, row);
  }
  return row;
}

// ---------------------------------------------------------------------------------------------
// Operations of the documents.

interface FuzzOperation {
  version: string;
  template: string;
  method: (typeof METHODS)[number];
  op: Json;
  document: OpenAPIObject;
}

const operations: FuzzOperation[] = Object.entries(documents).flatMap(([version, document]) =>
  Object.entries(document.paths).flatMap(([template, item]) =>
    METHODS.filter((method) => (item as Json)[method]).map((method) => ({ version, template, method, op: (item as Json)[method] as Json, document })),
  ),
);

function contextOf(document: OpenAPIObject): SchemaContext {
  const resolve = (schema: Schema): Schema => {
    let current = schema;
    while (current && typeof current.$ref === 'string') {
      current = (current.$ref as string)
        .slice(2)
        .split('/')
        .reduce((node: Json, key: string) => node?.[key], document as Json);
    }
    return current ?? {};
  };
  return {
    resolve,
    hint: (property, schema) => {
      if (property === 'tags' && schema.type === 'array') return fc.subarray(tagNames, { maxLength: 3 });
      if (property === 'refresh_token') return fc.constant(new Sym('refresh-token'));
      if (property === 'username' && schema.pattern === undefined)
        return fc.oneof(fc.constant(new Sym('own-username')), fc.string({ minLength: (schema.minLength as number | undefined) ?? 0, maxLength: 16 }));
      if (property === 'password' && schema.minLength === undefined) return fc.oneof(fc.constant(DEFAULT_PASSWORD), fc.string({ maxLength: 16 }));
      if (property === 'client_id')
        return fc.oneof(fc.constant(new Sym('client-id')), fc.string({ minLength: (schema.minLength as number | undefined) ?? 0, maxLength: 16 }));
      if (property === 'redirect_uri') return fc.constant(oauthClient.redirect_uris[0]);
      // a search needs a word to look for in each alternative (docs/lists.md#full-text-search-q), which a schema cannot say
      if (property === 'q')
        return fc
          .tuple(
            fc.constantFrom('nestjs', 'Café', '7919', '"query builder"', 'ünïcødé'),
            fc.array(fc.constantFrom('guide', '-draft', '"a b"', 'or typeorm', '*', 'NEAR(x)'), { maxLength: 4 }),
          )
          .map(([first, rest]) => [first, ...rest].join(' '));
      return undefined;
    },
  };
}

/** The resource kind a path id addresses (`/v1/articles/{id}/comments/{comment_id}` → comments). */
function kindOf(template: string): Kind | undefined {
  if (template.includes('{comment_id}')) return 'comments';
  return /\/(todos|orders|articles|tags|users|api-keys|oauth-clients|oauth-grants|events)\/\{id\}/.exec(template)?.[1] as Kind | undefined;
}

/** Operations that would end the caller's own credential (a password or role change, a deletion, a logout, ending logins): sent by a fresh caller. */
const disposableCaller = (o: FuzzOperation) =>
  (kindOf(o.template) === 'users' && o.method !== 'get') || /\/logout$/.test(o.template) || (o.method === 'delete' && /\/logins(\/\{id\})?$/.test(o.template));

/** The response schema of the 200 of a GET (its list item for a list): for valid `fields` values. */
function resourceFields(o: FuzzOperation, ctx: SchemaContext): string[] {
  const schema = o.op.responses?.['200']?.content?.['application/json']?.schema as Schema | undefined;
  if (!schema) return [];
  let resolved = flatten(schema, ctx);
  if (resolved.properties?.data?.type === 'array') resolved = flatten(resolved.properties.data.items as Schema, ctx);
  return Object.keys(resolved.properties ?? {}).filter((name) => name !== 'links');
}

/** Query parameters of an operation (`$ref`s resolved). */
function queryParameters(o: FuzzOperation, ctx: SchemaContext): Json[] {
  return ((o.op.parameters ?? []) as Json[]).map((p) => ctx.resolve(p)).filter((p) => p.in === 'query');
}

/** Valid query pairs: each optional parameter sometimes, required ones always, one paging style. */
function validQuery(o: FuzzOperation, ctx: SchemaContext): fc.Arbitrary<Array<[string, string]>> {
  const fields = resourceFields(o, ctx);
  const entries = queryParameters(o, ctx).map((p) => {
    let values: fc.Arbitrary<unknown[]>;
    const schema = flatten(p.schema as Schema, ctx);
    if (p.name === 'fields' && fields.length > 0) values = fc.subarray(fields, { minLength: 1 }).map((picked) => [picked.join(',')]);
    else if (schema.type === 'array') values = fc.array(validValue(schema.items as Schema, ctx, p.name as string), { minLength: 1, maxLength: 3 });
    else values = validValue(schema, ctx, p.name as string).map((value) => [value]);
    const pairs = values.map((list) =>
      list.map((value): [string, string] => [p.name as string, value instanceof Sym ? `\u0000sym:${value.name}` : encode(value)]),
    );
    return p.required ? pairs : fc.option(pairs, { nil: undefined });
  });
  return fc.tuple(...entries).map((groups) => {
    const pairs = groups.flatMap((group) => group ?? []);
    const pageStyle = pairs.some(([name]) => name === 'page' || name === 'size');
    // a list cursor is an opaque token the server signed (docs/lists.md#cursor-paging): no schema makes a generated one valid;
    // sorting by relevance needs q (docs/lists.md#full-text-search-q), which the parameters' schemas cannot say
    const searched = pairs.some(([name]) => name === 'q');
    const signed = pairs.filter(
      ([name, value]) => name !== 'cursor' && (searched || name !== 'sort' || !/(^|,)-?relevance(,|$)/.test(decodeURIComponent(value))),
    );
    return pageStyle ? signed.filter(([name]) => name !== 'offset' && name !== 'limit') : signed;
  });
}

/** Hostile query pairs: a valid query with hostile values, duplicates or unknown names added. */
function hostileQuery(o: FuzzOperation, ctx: SchemaContext): fc.Arbitrary<Array<[string, string]>> {
  const names = queryParameters(o, ctx).map((p) => p.name as string);
  const known = names.length > 0 ? names : ['page'];
  const mutation = fc.oneof(
    fc.tuple(fc.constantFrom(...known), fc.constantFrom(...HOSTILE_QUERY_VALUES)).map(([name, value]) => [[name, value]] as Array<[string, string]>),
    fc.tuple(fc.constantFrom(...known), fc.constantFrom(...HOSTILE_QUERY_VALUES), fc.constantFrom(...HOSTILE_QUERY_VALUES)).map(
      ([name, first, second]) =>
        [
          [name, first],
          [name, second],
        ] as Array<[string, string]>,
    ),
    fc
      .tuple(fc.constantFrom(...HOSTILE_QUERY_NAMES), fc.constantFrom(...HOSTILE_QUERY_VALUES))
      .map(([name, value]) => [[encode(name).replace(/%25/g, '%'), value]] as Array<[string, string]>),
    fc.constant([
      ['page', '1'],
      ['offset', '0'],
    ] as Array<[string, string]>),
  );
  return fc.tuple(validQuery(o, ctx), fc.array(mutation, { minLength: 1, maxLength: 2 })).map(([valid, extra]) => [...valid, ...extra.flat()]);
}

/** Valid bodies of the operation's request body, in one of its media types. */
function validBody(o: FuzzOperation, ctx: SchemaContext): fc.Arbitrary<GeneratedRequest['body']> {
  const content = o.op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
  if (!content) return fc.constant(undefined);
  return fc.constantFrom(...Object.keys(content)).chain((contentType) => validValue(content[contentType].schema, ctx).map((value) => ({ contentType, value })));
}

/** Broken bodies: a hostile value, invalid UTF-8, an unsupported media type or content encoding. */
function hostileBody(o: FuzzOperation, ctx: SchemaContext): fc.Arbitrary<GeneratedRequest['body'] & object> {
  const content = o.op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
  const types = content ? Object.keys(content) : ['application/json'];
  const schema = content ? content[types[0]].schema : { type: 'object', properties: {} };
  const lone = Buffer.from([0xed, 0xa0, 0x80]);
  return fc.oneof(
    { weight: 10, arbitrary: fc.tuple(fc.constantFrom(...types), hostileValue(schema, ctx)).map(([contentType, value]) => ({ contentType, value })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        {
          contentType: types[0],
          bytes: Buffer.concat([Buffer.from('{"title":"'), lone, Buffer.from('","name":"x\xff"}', 'latin1')]),
          note: 'invalid UTF-8 (CESU-8 surrogate, 0xFF)',
        },
        { contentType: types[0], bytes: Buffer.from('{"title": "unterminated'), note: 'malformed JSON' },
        { contentType: 'text/plain', bytes: Buffer.from('{"title":"x"}'), note: 'unsupported media type' },
        { contentType: 'application/json; charset=utf-16', bytes: Buffer.from('{"title":"x"}', 'utf16le'), note: 'UTF-16 body' },
        { contentType: `${types[0]}\u0000gzip`, bytes: Buffer.from('{"title":"x"}'), note: 'content-encoding: gzip but not gzip' },
        { contentType: `${types[0]}\u0000br`, bytes: Buffer.from('{"title":"x"}'), note: 'content-encoding: br' },
        { contentType: types[0], bytes: Buffer.alloc(110 * 1024, 0x20), note: '110 KiB of spaces' },
      ),
    },
  );
}

const VALID_IDS: fc.Arbitrary<IdChoice> = fc.constantFrom<IdChoice>(
  { kind: 'own' },
  { kind: 'own' },
  { kind: 'other' },
  { kind: 'fresh' },
  { kind: 'missing' },
);
const HOSTILE_ID: fc.Arbitrary<IdChoice> = fc.constantFrom(...HOSTILE_IDS).map((raw): IdChoice => ({ kind: 'literal', raw }));

/** Valid values of the operation's header parameters (X-CSRF-Token: ignored with a bearer token). */
function validHeaders(o: FuzzOperation, ctx: SchemaContext): fc.Arbitrary<Record<string, string>> {
  const headers = ((o.op.parameters ?? []) as Json[]).map((p) => ctx.resolve(p)).filter((p) => p.in === 'header');
  return fc
    .tuple(
      ...headers.map((p) =>
        fc.option(
          validValue(p.schema as Schema, ctx).map((value) => [p.name as string, String(value)] as const),
          { nil: undefined },
        ),
      ),
    )
    .map((pairs) => Object.fromEntries(pairs.filter((pair): pair is readonly [string, string] => pair !== undefined)));
}

/** The arbitrary of one property's requests. */
function requests(o: FuzzOperation, mode: Mode): fc.Arbitrary<GeneratedRequest> {
  const ctx = contextOf(o.document);
  const hasIds = o.template.includes('{');
  if (mode === 'schema-valid') {
    return fc.record({ ids: VALID_IDS, query: validQuery(o, ctx), headers: validHeaders(o, ctx), body: validBody(o, ctx) });
  }
  const acceptsBody = o.op.requestBody !== undefined || o.op.responses?.['415'] !== undefined;
  const parts = fc.record({
    ids: hasIds ? fc.oneof(VALID_IDS, HOSTILE_ID) : VALID_IDS,
    query: fc.oneof(validQuery(o, ctx), hostileQuery(o, ctx)),
    headers: validHeaders(o, ctx),
    body: acceptsBody ? fc.oneof(validBody(o, ctx), hostileBody(o, ctx)) : validBody(o, ctx),
  });
  // at least one part hostile
  return fc.oneof(
    ...(hasIds ? [parts.chain((p) => HOSTILE_ID.map((ids) => ({ ...p, ids })))] : []),
    parts.chain((p) => hostileQuery(o, ctx).map((query) => ({ ...p, query }))),
    ...(acceptsBody ? [parts.chain((p) => hostileBody(o, ctx).map((body) => ({ ...p, body })))] : []),
  );
}

// ---------------------------------------------------------------------------------------------
// Sending and checking.

/** Fills {@link Sym} values in. */
async function resolveSymbols(value: unknown, caller: CreatedUser): Promise<unknown> {
  if (value instanceof Sym) {
    if (value.name === 'own-username') return caller.user.username;
    if (value.name === 'client-id') return oauthClient.client_id;
    const pair = await app.get(AuthService).login(caller.user.username, DEFAULT_PASSWORD);
    return 'refresh_token' in pair ? pair.refresh_token : '';
  }
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Promise.all(value.map((item) => resolveSymbols(item, caller)));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    Object.defineProperty(out, key, { value: await resolveSymbols(item, caller), enumerable: true, writable: true, configurable: true });
  return out;
}

/** An object as `application/x-www-form-urlencoded` (arrays repeat, objects as JSON text). */
function formText(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value) || value instanceof RawJson) return toJsonText(value);
  const params = new URLSearchParams();
  for (const [key, item] of Object.entries(value)) {
    for (const one of Array.isArray(item) ? item : [item])
      params.append(key, one instanceof RawJson ? one.text : typeof one === 'object' && one !== null ? JSON.stringify(one) : String(one));
  }
  return params.toString();
}

/** Resolves the path ids of a request for `caller`. */
async function resolvePath(o: FuzzOperation, ids: IdChoice, caller: CreatedUser): Promise<string> {
  const kind = kindOf(o.template);
  const names = (o.template.match(/\{([^}]+)\}/g) ?? []).map((name) => name.slice(1, -1));
  if (names.length === 0) return o.template;
  let values: Record<string, string>;
  if (ids.kind === 'literal') values = Object.fromEntries(names.map((name, i) => [name, i === names.length - 1 ? ids.raw : '1']));
  else if (ids.kind === 'missing' || !kind) values = Object.fromEntries(names.map((name) => [name, kind === 'events' ? MISSING_EVENT_ID : '2147483000']));
  else {
    const owner = ids.kind === 'other' ? other : caller;
    // rows a DELETE or a user change would destroy are fresh each time
    const fresh = ids.kind === 'fresh' || o.method === 'delete' || kind === 'users';
    let row: Record<string, number | string>;
    if (kind === 'users') row = ids.kind === 'own' ? { id: caller.user.id } : await createRow('users', owner);
    else row = fresh ? await createRow(kind, owner) : await cachedRow(kind, owner);
    values = Object.fromEntries(names.map((name) => [name, String(row[name])]));
  }
  return names.reduce((path, name) => path.replace(`{${name}}`, values[name]), o.template);
}

function describeRequest(request: SentRequest): string {
  const body = request.body;
  const shown =
    body === undefined
      ? '(none)'
      : body.length <= 2048
        ? JSON.stringify(body.toString('latin1'))
        : `${JSON.stringify(body.subarray(0, 2048).toString('latin1'))}… (${body.length} bytes, latin1 view)`;
  const url = request.url.length <= 2048 ? request.url : `${request.url.slice(0, 2048)}… (${request.url.length} characters)`;
  return `${request.method} ${url}\n  headers: ${JSON.stringify(request.headers)}\n  body: ${shown}`;
}

/** Every key (own, at any depth) of a parsed body. */
function keysOf(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      into.add(key);
      keysOf(item, into);
    }
  }
  return into;
}

/** Every string (at any depth) of a parsed body. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsOf(item, into);
  return into;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Differences between what a write sent and what came back (`where` names the response). Strings
 * and numbers must be identical; date-times the same instant; a set (`uniqueItems`, tag names) the
 * same members in any order.
 */
function readBackProblems(sent: Json, requestSchema: Schema, ctx: SchemaContext, received: Json, where: string): string[] {
  const properties = (flatten(requestSchema, ctx).properties ?? {}) as Record<string, Schema>;
  const problems: string[] = [];
  for (const [name, value] of Object.entries(sent)) {
    const schema = properties[name] ? flatten(properties[name], ctx) : undefined;
    if (!schema || schema.writeOnly || schema.readOnly || !(name in received)) continue;
    if (value === null && schema.nullable !== true) continue; // merge patch: null clears to the default
    const got = received[name];
    const same =
      schema.format === 'date-time' && typeof value === 'string' && typeof got === 'string'
        ? Date.parse(value) === Date.parse(got)
        : (name === 'tags' || schema.uniqueItems === true) && Array.isArray(value) && Array.isArray(got)
          ? [...new Set(value)].sort().join(',') === [...got].sort().join(',')
          : JSON.stringify(value) === JSON.stringify(got);
    if (!same) problems.push(`${where}: ${name} sent ${JSON.stringify(value)?.slice(0, 300)} but got ${JSON.stringify(got)?.slice(0, 300)}`);
  }
  return problems;
}

/** Sends one generated request as `role` and returns the problems of its response (empty when fine). */
async function exercise(o: FuzzOperation, mode: Mode, generated: GeneratedRequest, role: Role): Promise<{ request: SentRequest; problems: string[] }> {
  const caller = disposableCaller(o) ? await createUser(app, { role }) : callers[role];
  const ctx = contextOf(o.document);
  const path = await resolvePath(o, generated.ids, caller);
  const query = await Promise.all(
    generated.query.map(async ([name, value]) => {
      const sym = /^\u0000sym:(.+)$/.exec(value);
      return `${name}=${sym ? encode(await resolveSymbols(new Sym(sym[1] as Sym['name']), caller)) : value}`;
    }),
  );
  const headers: Record<string, string> = { ...generated.headers, authorization: bearer(caller.token), accept: 'application/json' };
  let body: Buffer | undefined;
  let sentValue: unknown;
  if (generated.body) {
    const [contentType, encoding] = generated.body.contentType.split('\u0000');
    headers['content-type'] = contentType;
    if (encoding) headers['content-encoding'] = encoding;
    if ('bytes' in generated.body) body = generated.body.bytes;
    else {
      const value = await resolveSymbols(generated.body.value, caller);
      const text = contentType === 'application/x-www-form-urlencoded' ? formText(value) : toJsonText(value);
      body = Buffer.from(text, 'utf8');
      try {
        sentValue = contentType === 'application/x-www-form-urlencoded' ? undefined : asParsed(value);
      } catch {
        sentValue = undefined;
      }
    }
  }
  const request: SentRequest = { method: o.method.toUpperCase(), url: `${path}${query.length > 0 ? `?${query.join('&')}` : ''}`, headers, body };
  const res = await send(request);
  const problems: string[] = [];
  const store = violationStore();
  for (const violation of store.violations.splice(0)) problems.push(...violation.problems.map((problem) => `not true to the document: ${problem}`));
  if (res.status >= 500) problems.push(`answered ${res.status}: ${res.text.slice(0, 500)}`);
  const documented = Object.keys(o.op.responses ?? {});
  // Node's HTTP parser answers 431 before any route when the request line and headers pass 16 KiB
  // (a 10,000-character id with a 10,000-character query value): the transport's answer, tested in
  // hostile-input.e2e-spec.ts and documented in docs/errors.md, not the operation's
  const parserRefusal = res.status === 431 && request.url.length + JSON.stringify(headers).length > 16 * 1024;
  if (!documented.includes(String(res.status)) && !parserRefusal)
    problems.push(`status ${res.status} is not documented (documented: ${documented.join(', ')})`);
  if (res.status >= 400 && !OAUTH_PROTOCOL.test(o.template)) {
    const error = res.json as Json | undefined;
    const isErrorResp = !!error && typeof error.error === 'string' && typeof error.code === 'string' && typeof error.request_id === 'string';
    if (!isErrorResp) problems.push(`error body is not an ErrorResp: ${res.text.slice(0, 300)}`);
  }
  // the OAuth protocol endpoints answer 400 for protocol errors a schema cannot express (an unknown client, PKCE missing)
  if (mode === 'schema-valid' && res.status === 400 && !OAUTH_PROTOCOL.test(o.template))
    problems.push(`a schema-valid request was refused with 400: ${res.text.slice(0, 500)}`);
  const success = res.status >= 200 && res.status < 300;
  if (success && sentValue !== undefined) {
    const forbidden = [...keysOf(sentValue)].filter((key) => NEVER_ACCEPTED_KEYS.has(key));
    if (forbidden.length > 0)
      problems.push(`accepted a body with the unknown propert${forbidden.length > 1 ? 'ies' : 'y'} ${forbidden.join(', ')} (${res.status})`);
    const strings = stringsOf(sentValue);
    if (strings.some((text) => text.includes('\u0000'))) problems.push(`accepted a body string containing U+0000 (${res.status})`);
    if (strings.some((text) => LONE_SURROGATE.test(text))) problems.push(`accepted a body string with an unpaired surrogate (${res.status})`);
  }
  if (success && /%00/i.test(request.url)) problems.push(`accepted a URL containing %00 (${res.status})`);
  // a successful write reads back unchanged
  const write = (o.method === 'post' && res.status === 201) || ((o.method === 'put' || o.method === 'patch') && res.status === 200);
  if (write && sentValue && typeof sentValue === 'object' && !Array.isArray(sentValue) && res.json && typeof res.json === 'object') {
    const requestSchema = (o.op.requestBody.content as Json)[headers['content-type']]?.schema as Schema;
    problems.push(...readBackProblems(sentValue as Json, requestSchema, ctx, res.json as Json, `${res.status} body`));
    const location = o.method === 'post' ? res.headers.get('location') : path;
    const readable = location && validators[o.version].find('get', location.split('?')[0]);
    if (readable) {
      const read = await send({ method: 'GET', url: location, headers: { authorization: bearer(admin.token), accept: 'application/json' } });
      for (const violation of store.violations.splice(0)) problems.push(...violation.problems.map((problem) => `read-back GET ${location}: ${problem}`));
      if (read.status !== 200) problems.push(`read-back GET ${location} answered ${read.status}: ${read.text.slice(0, 300)}`);
      else problems.push(...readBackProblems(sentValue as Json, requestSchema, ctx, read.json as Json, `read-back GET ${location}`));
    }
  }
  return { request, problems };
}

describe.each(['1', '2'])('fuzz of the API v%s document (docs/wire.md, docs/errors.md#documentation)', (version) => {
  const ofVersion = operations.filter((o) => o.version === version);
  it('has operations to fuzz', () => {
    expect(ofVersion.length).toBeGreaterThan(40);
  });

  describe.each(ofVersion.map((o) => [`${o.method.toUpperCase()} ${o.template}`, o] as const))('%s', (_name, o) => {
    it.each(['schema-valid', 'hostile'] as const)('%s requests', async (mode) => {
      const property = fc.asyncProperty(requests(o, mode), async (generated) => {
        for (const role of ['admin', 'user'] as const) {
          const { request, problems } = await exercise(o, mode, generated, role);
          if (problems.length > 0) throw new Error(`as ${role}:\n  ${problems.join('\n  ')}\nrequest:\n  ${describeRequest(request)}`);
        }
      });
      const details = await fc.check(property, { seed: SEED, numRuns: RUNS, endOnFailure: true });
      if (details.failed) {
        const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        throw new Error(
          `${mode} fuzz of ${o.method.toUpperCase()} ${o.template} failed after ${details.numRuns} case(s) — reproduce with FUZZ_SEED=${details.seed} FUZZ_RUNS=${RUNS} (fast-check path ${details.counterexamplePath}):\n${cause}`,
        );
      }
    });
  });
});

// the fixtures' own tokens stay valid through the run (no operation may end them behind the suite's back)
it('leaves the fixture callers signed in', async () => {
  for (const caller of [admin, user, other]) {
    const res = await send({ method: 'GET', url: `/v1/users/${caller.user.id}`, headers: { authorization: bearer(caller.token) } });
    expect(res.status).toBe(200);
  }
});
