import type { OpenAPIObject } from '@nestjs/swagger';
import { NO_RATE_LIMIT_EXTENSION } from '../auth/rate-limits.js';
import { documentIdempotency } from '../idempotency/idempotency.openapi.js';
import { type ResourceDeclaration, tagsOf, versionedSchemasOf } from '../common/resources/define-resource.js';
import { LOCATION_EXTENSION } from '../common/decorators/operation.decorators.js';
import { errorResponse, NO_DATABASE_EXTENSION } from '../common/openapi/api-errors.decorator.js';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const BODY_METHODS = new Set(['post', 'put', 'patch']);
/** The headers of a rate-limited response: draft 10's two fields, then the earlier draft's three that v1 clients read. */
const RATE_LIMIT_HEADERS = ['RateLimit-Policy', 'RateLimit', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
const UNSAFE_METHODS = new Set(['post', 'put', 'patch', 'delete']);

const RATE_LIMIT_NOTE =
  'Sent on every response of a rate-limited operation (every operation but the health probes) once the request reached the limiter, which runs after the body is read (so not on a 413 or 415); a 401 for a refused credential is counted as anonymous (docs/limits.md#rates).';

/** Response headers, shared through `components.headers`. */
const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'The request’s id: the caller’s `X-Request-Id` when it is 1-128 of `[A-Za-z0-9._:-]`, else a new UUID. Also in `ErrorResp.request_id`.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$', maxLength: 128, example: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  },
  Location: {
    description: 'Path of the created resource.',
    schema: { type: 'string', format: 'uri-reference', maxLength: 2048, example: '/v{version}/todos/1' },
  },
  'WWW-Authenticate': {
    description: 'The challenge: `Bearer realm="api"` (plus `error="invalid_token"` when a bad token was sent).',
    schema: { type: 'string', maxLength: 256, example: 'Bearer realm="api"' },
  },
  ETag: {
    description: 'Strong entity tag of the full representation (RFC 9110 §8.8.3), also when `fields` narrows the body: the stored version of the resource and the API version it is served as, e.g. `"3.v2"`. Send it back in `If-None-Match` (GET → 304 while unchanged) or `If-Match` (PUT, PATCH, DELETE → 412 once it changed).',
    schema: { type: 'string', pattern: '^"[0-9]+\\.v[0-9]+"$', maxLength: 32, example: '"3.v1"' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400, example: 42 },
  },
  'RateLimit-Limit': {
    description: `The quota of the policy the request was counted in: requests per window (the window is the \`w\` of \`RateLimit-Policy\`: 60 s, or 3,600 s for registrations and password changes). Kept from an earlier draft of the RateLimit fields; prefer \`RateLimit-Policy\`. ${RATE_LIMIT_NOTE}`,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 1_000_000, example: 60 },
  },
  'RateLimit-Remaining': {
    description: `Requests left in the current window (0 on a 429). Kept from an earlier draft; prefer the \`r\` of \`RateLimit\`. ${RATE_LIMIT_NOTE}`,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000, example: 59 },
  },
  'RateLimit-Reset': {
    description: `Seconds until the window ends and the quota is renewed. Kept from an earlier draft; prefer the \`t\` of \`RateLimit\`. ${RATE_LIMIT_NOTE}`,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 3600, example: 42 },
  },
  'RateLimit-Policy': {
    description: `The policy the request was counted in (draft-ietf-httpapi-ratelimit-headers-10): \`"<name>";q=<quota>;w=<window seconds>\`. Names: \`api_key\` (per API key), \`user\` (per user: bearer token, session, OAuth token), \`anonymous\` (per client address), \`registration\`, \`sign_in\` (per client address), \`password_change\` (per user). ${RATE_LIMIT_NOTE}`,
    schema: { type: 'string', pattern: '^"[a-z_]{1,32}";q=[0-9]{1,7};w=[0-9]{1,5}$', maxLength: 64, example: '"user";q=600;w=60' },
  },
  RateLimit: {
    description: `The policy's current service limit (draft-ietf-httpapi-ratelimit-headers-10): \`"<name>";r=<remaining>;t=<seconds until the window ends>\`. ${RATE_LIMIT_NOTE}`,
    schema: { type: 'string', pattern: '^"[a-z_]{1,32}";r=[0-9]{1,7};t=[0-9]{1,5}$', maxLength: 64, example: '"user";r=599;t=42' },
  },
};

/** The CSRF header of cookie-authenticated writes, shared through `components.parameters`. */
const CSRF_PARAMETER = {
  name: 'X-CSRF-Token',
  in: 'header',
  required: false,
  description:
    'Needed only with the `sid` session cookie: the `csrf_token` of the session (from `POST /v{version}/sessions`). Missing or wrong on a cookie-authenticated write → 403. Ignored with a bearer token or API key.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{32}$', minLength: 32, maxLength: 32, example: 'k3V9r1b2Qm8xZ0pL4tY7wE2sD6fH9jN1' },
};

/** `*` or a comma-separated list of entity tags, weak or strong (RFC 9110 §8.8.3: `etagc` is `!`, `#`-`~`). */
const ENTITY_TAGS_PATTERN = '^(\\*|(W/)?"[!#-~]{0,64}"( ?, ?(W/)?"[!#-~]{0,64}"){0,15})$';

/** The precondition headers of conditional requests, shared through `components.parameters`. */
const PRECONDITION_PARAMETERS: Record<string, Json> = {
  'If-None-Match': {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'Entity tags the client holds (`"3.v1"`, a comma-separated list, or `*`; weak comparison, RFC 9110 §13.1.2): when one is the current `ETag` the answer is 304 with no body.',
    schema: { type: 'string', pattern: ENTITY_TAGS_PATTERN, maxLength: 1024, example: '"3.v1"' },
  },
  'If-Match': {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'Write only if the resource is unchanged (RFC 9110 §13.1.1): its `ETag` as last read (strong comparison; a comma-separated list allowed), or `*` for "exists". No match → 412 `precondition_failed` and nothing is written; the check and the write are one statement, so of two writes sent with the same tag exactly one succeeds. Required when the server runs with REQUIRE_IF_MATCH=true (else 428). Evaluated after authentication, authorization and existence (401, 403, 404 first).',
    schema: { type: 'string', pattern: ENTITY_TAGS_PATTERN, maxLength: 1024, example: '"3.v1"' },
  },
};

/** The 304 response of a conditional GET: no body, the `ETag` again. */
const NOT_MODIFIED = { description: 'Not modified: `If-None-Match` names the current `ETag`. No body.', headers: { ETag: { $ref: '#/components/headers/ETag' } } };

/**
 * The resource schema name of a response (`Todo`), or undefined when it is none of `versioned`:
 * the schemas whose representations carry an `ETag` (the declarations' `versioned`).
 */
function versionedResource(response: Json | undefined, versioned: ReadonlySet<string>): string | undefined {
  // a read taking `fields` is already `anyOf` the schema and its sparse variant
  const schema = response?.content?.['application/json']?.schema;
  const name = (schema?.$ref ?? schema?.anyOf?.[0]?.$ref)?.split('/').pop();
  return name && versioned.has(name) ? name : undefined;
}

/**
 * Conditional requests of one operation (RFC 9110 §13): `ETag` on its 2xx responses carrying a
 * versioned resource; on a read of one, `If-None-Match` and 304; on PUT, PATCH and DELETE of a
 * path whose GET reads one, `If-Match`, 412 and 428.
 */
function describeConditionalRequests(pathItem: Json, method: string, operation: Json, versioned: ReadonlySet<string>): void {
  const responses: Json = operation.responses;
  for (const [status, response] of Object.entries<Json>(responses)) {
    if (status.startsWith('2') && versionedResource(response, versioned)) response.headers = { ...response.headers, ETag: { $ref: '#/components/headers/ETag' } };
  }
  const read = versionedResource(pathItem.get?.responses?.['200'], versioned);
  if (!read) return;
  if (method === 'get') {
    operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/If-None-Match' }];
    responses['304'] ??= structuredClone(NOT_MODIFIED);
  } else if (method === 'put' || method === 'patch' || method === 'delete') {
    operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/If-Match' }];
    for (const status of [412, 428]) responses[status] ??= errorResponse(status);
  }
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Resolves a local `$ref` (one level at a time). */
function resolve(document: Json, schema: Json | undefined): Json | undefined {
  let current = schema;
  for (let depth = 0; current?.$ref && depth < 10; depth++) {
    current = current.$ref.replace(/^#\//, '').split('/').reduce((node: Json | undefined, key: string) => node?.[key], document);
  }
  return current;
}

/**
 * An example value for `schema`, assembled from the examples of its properties (the DTOs carry
 * them): request examples leave out `readOnly` properties, response examples `writeOnly` ones.
 */
export function exampleFor(document: Json, schema: Json | undefined, mode: 'request' | 'response', depth = 0): unknown {
  const target = resolve(document, schema);
  if (!target || depth > 8) return undefined;
  if (target.example !== undefined) return target.example;
  if (target.enum) return target.enum[0];
  if (target.default !== undefined) return target.default;
  if (target.allOf) return Object.assign({}, ...target.allOf.map((part: Json) => exampleFor(document, part, mode, depth + 1)));
  if (target.type === 'object' || target.properties) {
    const out: Json = {};
    for (const [name, property] of Object.entries<Json>(target.properties ?? {})) {
      const resolved = resolve(document, property);
      if (mode === 'request' && (property.readOnly || resolved?.readOnly)) continue;
      if (mode === 'response' && (property.writeOnly || resolved?.writeOnly)) continue;
      const value = exampleFor(document, property, mode, depth + 1);
      if (value !== undefined) out[name] = value;
    }
    return out;
  }
  if (target.type === 'array') {
    const item = exampleFor(document, target.items, mode, depth + 1);
    return item === undefined ? [] : [item];
  }
  if (target.type === 'string') return target.format === 'date-time' ? '2026-11-21T10:15:00.000Z' : 'string';
  if (target.type === 'integer' || target.type === 'number') return target.minimum ?? 1;
  if (target.type === 'boolean') return true;
  return undefined;
}

/** The example of a list envelope: one item, the links for page 1 of `path`. */
function envelopeExample(document: Json, envelope: Json, path: string): Json {
  const href = `${path.replace(/\{[^}]+\}/g, '1')}?page=1&size=20`;
  return {
    data: [exampleFor(document, envelope.properties.data.items, 'response')],
    page: 1,
    size: 20,
    total: 1,
    links: ['self', 'first', 'last'].map((rel) => ({ rel, href })),
  };
}

/** Gives every schema of type integer without a format `int32` (ids and counts are 32-bit; cents say `int64`). */
function defaultIntegerFormats(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach(defaultIntegerFormats);
  const schema = node as Json;
  if (schema.type === 'integer' && schema.format === undefined) schema.format = 'int32';
  for (const [key, value] of Object.entries(schema)) if (key !== 'example' && key !== 'default') defaultIntegerFormats(value);
}

/**
 * Closes a request body schema and every object schema inside it (`additionalProperties: false`),
 * following `$ref`s into components (each closed once): the validation pipe refuses a property a
 * body does not declare with 400 (whitelist + forbidNonWhitelisted, docs/writes.md#read-only-and-unknown-fields), nested objects too.
 */
function closeRequestSchema(document: Json, node: unknown, seen: Set<string>): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((item) => closeRequestSchema(document, item, seen));
  const schema = node as Json;
  if (typeof schema.$ref === 'string') {
    if (seen.has(schema.$ref)) return;
    seen.add(schema.$ref);
    return closeRequestSchema(document, resolve(document, schema), seen);
  }
  if ((schema.type === 'object' || schema.properties) && schema.additionalProperties === undefined) schema.additionalProperties = false;
  for (const [key, value] of Object.entries(schema)) if (key !== 'example' && key !== 'default' && key !== 'enum') closeRequestSchema(document, value, seen);
}

/** Suffix of the sparse variant of a resource schema: what a `fields=` response carries. */
export const SPARSE_SUFFIX = 'Sparse';

/**
 * The sparse variant of resource schema `name` (`Todo` → `TodoSparse`): the same properties, none
 * required but `id` and `links` (always returned), closed. Added to the components once; returns
 * the new name, or undefined when `name` is no resource schema.
 */
function sparseResource(document: Json, name: string): string | undefined {
  const schemas: Json = document.components.schemas;
  const source = schemas[name];
  if (!source?.properties?.id) return undefined;
  const sparse = `${name}${SPARSE_SUFFIX}`;
  schemas[sparse] ??= {
    ...structuredClone(source),
    description: `${name} as a \`fields=\` request returns it: \`id\`, \`links\` and only the fields asked for (any of the properties below may be absent).`,
    required: (source.required ?? []).filter((property: string) => property === 'id' || property === 'links'),
    additionalProperties: false,
  };
  return sparse;
}

/**
 * A `fields=` response (docs/lists.md#sparse-fieldsets-fields) leaves out the properties not asked for, so the 200 body of an
 * operation taking `fields` is `anyOf` the full schema and its sparse variant: `Todo` or
 * `TodoSparse` for a read, `TodoList` or `TodoSparseList` (items `TodoSparse`) for a list. A
 * generated client types the unrequested properties as optional.
 */
function describeSparseResponse(document: Json, operation: Json): void {
  if (!(operation.parameters ?? []).some((parameter: Json) => parameter.in === 'query' && parameter.name === 'fields')) return;
  const media = operation.responses?.['200']?.content?.['application/json'];
  const ref: string | undefined = media?.schema?.$ref;
  if (!ref) return;
  const name = ref.split('/').pop() as string;
  const target = resolve(document, media.schema);
  const itemRef: string | undefined = target?.properties?.data?.items?.$ref;
  let sparse: string | undefined;
  if (itemRef) {
    const itemSparse = sparseResource(document, itemRef.split('/').pop() as string);
    if (!itemSparse) return;
    sparse = `${itemSparse}List`;
    document.components.schemas[sparse] ??= {
      ...structuredClone(target),
      description: `A page of ${itemSparse}: the list envelope of a \`fields=\` request.`,
      properties: { ...structuredClone(target!.properties), data: { ...structuredClone(target!.properties.data), items: { $ref: `#/components/schemas/${itemSparse}` } } },
    };
  } else {
    sparse = sparseResource(document, name);
  }
  if (!sparse) return;
  media.schema = { anyOf: [{ $ref: ref }, { $ref: `#/components/schemas/${sparse}` }] };
}

function addHeaders(response: Json, names: string[]): void {
  response.headers = { ...response.headers };
  for (const name of names) response.headers[name] ??= header(name);
}

/**
 * Completes the generated document once for all operations (README.md#api-documentation-and-clients), from what every
 * operation shares rather than per controller:
 * - error statuses the shared pipeline can return: 400 (bad query parameter, credential in the
 *   query) and 500 everywhere; 503 (database or Redis unavailable, with `Retry-After`) everywhere but on
 *   operations marked `NoDatabase()`; 413 and 415 wherever a body is read (POST, PUT, PATCH); 401, 403
 *   (role, ownership, API-key scope, CSRF token) on every protected operation, and 429 (rate
 *   limit) on every operation not marked `SkipRateLimit()` — each with `ErrorResp` and an example;
 * - response headers: `X-Request-Id` on every response, `Location` on creations, `WWW-Authenticate`
 *   on 401, `Retry-After` on 429 and 503, `RateLimit-Policy`, `RateLimit` and the earlier draft's
 *   `RateLimit-Limit`, `-Remaining`, `-Reset` wherever the rate limiter has run;
 * - `X-CSRF-Token` as an optional header parameter of protected writes; `Idempotency-Key` (with
 *   `Idempotent-Replayed`, 409, 422) where `Idempotent()` marks it (idempotency.openapi.ts);
 * - conditional requests: `ETag` on responses carrying a versioned resource (a schema a
 *   declaration of `resources` lists in `versioned`), `If-None-Match` and 304 on its reads,
 *   `If-Match`, 412 and 428 on its PUT, PATCH and DELETE;
 * - PATCH bodies also as `application/merge-patch+json`;
 * - an example on every request body and success response, assembled from the schemas;
 * - `int32` on integers without a format; the tags the operations use, described and ordered as
 *   the declarations in `resources` (the registry's); a tag no declaration names is
 *   listed last without a description;
 * - no `default`s in `Update…Body` schemas (a PATCH leaves omitted fields as they are);
 * - closed JSON request bodies: `additionalProperties: false` on every object schema in them,
 *   nested ones and PATCH bodies included (unknown properties → 400);
 * - on reads and lists taking `fields`, the 200 body `anyOf` the full schema and its `…Sparse`
 *   variant (properties optional but `id` and `links`).
 */
export function completeDocument(document: OpenAPIObject, resources: readonly ResourceDeclaration[]): void {
  const doc = document as unknown as Json;
  const versioned = versionedSchemasOf(resources);
  doc.components ??= {};
  doc.components.headers = { ...doc.components.headers, ...HEADERS };
  doc.components.parameters = { ...doc.components.parameters, 'X-CSRF-Token': CSRF_PARAMETER, ...PRECONDITION_PARAMETERS };
  documentIdempotency(doc);
  defaultIntegerFormats(doc.components.schemas);
  // PATCH bodies inherit `default`s from the create bodies, but an omitted field keeps its value
  for (const [name, schema] of Object.entries<Json>(doc.components.schemas ?? {})) {
    if (!/^Update\w+Body$/.test(name)) continue;
    for (const property of Object.values<Json>(schema.properties ?? {})) delete property.default;
  }

  const closed = new Set<string>();
  for (const [path, pathItem] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const operation: Json | undefined = pathItem[method];
      if (!operation) continue;
      const protectedOperation = Array.isArray(operation.security) && operation.security.length > 0;
      const acceptsSession = protectedOperation && operation.security.some((requirement: Json) => 'session' in requirement);
      // own copies: the generator may share response objects between operations
      const responses: Json = (operation.responses = structuredClone(operation.responses ?? {}));

      // here rather than DocumentBuilder.addGlobalResponse: that registers ErrorResp before the first controller's schemas, reordering the components
      const statuses = [400, 500];
      // the database may be down or too slow for any operation that reads it (docs/errors.md#the-body, docs/operations.md#faults)
      if (!operation[NO_DATABASE_EXTENSION]) statuses.push(503);
      delete operation[NO_DATABASE_EXTENSION];
      if (BODY_METHODS.has(method)) statuses.push(413, 415);
      // every operation but the health probes is rate limited (docs/limits.md#rates)
      const rateLimited = !operation[NO_RATE_LIMIT_EXTENSION];
      delete operation[NO_RATE_LIMIT_EXTENSION];
      if (protectedOperation) statuses.push(401, 403);
      if (rateLimited) statuses.push(429);
      for (const status of statuses) responses[status] ??= errorResponse(status);
      // an HTML page's own 429 (the OAuth sign-in form's failed-login throttle): the limiter's 429 is JSON
      if (rateLimited && !responses[429].content?.['application/json']) {
        responses[429].content = { ...responses[429].content, 'application/json': errorResponse(429).content['application/json'] };
      }
      describeConditionalRequests(pathItem, method, operation, versioned);

      for (const parameter of operation.parameters ?? []) defaultIntegerFormats(parameter.schema);
      if (acceptsSession && UNSAFE_METHODS.has(method)) {
        operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/X-CSRF-Token' }];
      }

      const body = operation.requestBody?.content?.['application/json'];
      if (body) {
        closeRequestSchema(doc, body.schema, closed);
        body.example ??= exampleFor(doc, body.schema, 'request');
        if (method === 'patch') operation.requestBody.content['application/merge-patch+json'] ??= { schema: body.schema, example: body.example };
      }
      const form = operation.requestBody?.content?.['application/x-www-form-urlencoded'];
      if (form) form.example ??= exampleFor(doc, form.schema, 'request');

      for (const [status, response] of Object.entries<Json>(responses)) {
        const code = Number(status);
        if (code === 304) {
          addHeaders(response, ['X-Request-Id']);
          continue;
        }
        const names = ['X-Request-Id'];
        if (code === 201 && operation[LOCATION_EXTENSION]) names.push('Location');
        if (code === 401) names.push('WWW-Authenticate');
        if (code === 429 || code === 503) names.push('Retry-After');
        // the limiter runs after the body parser (a refused credential counts as anonymous), before everything else of the operation
        if (rateLimited && ![413, 415].includes(code)) names.push(...RATE_LIMIT_HEADERS);
        addHeaders(response, names);
        if (code < 200 || code >= 300) continue;
        const media = response.content?.['application/json'];
        if (media && media.example === undefined) {
          const ref: string | undefined = media.schema?.$ref;
          const target = resolve(doc, media.schema);
          media.example = ref?.endsWith('List') && target?.properties?.data ? envelopeExample(doc, target, path) : exampleFor(doc, media.schema, 'response');
        }
        if (!response.description) {
          const name = media?.schema?.$ref?.split('/').pop();
          response.description = name ? `The ${name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}.` : 'Success.';
        }
      }
      delete operation[LOCATION_EXTENSION];
      // after the examples, which are assembled from the full schema
      describeSparseResponse(doc, operation);
    }
  }

  const used = new Set<string>();
  for (const pathItem of Object.values<Json>(doc.paths)) for (const method of METHODS) for (const tag of pathItem[method]?.tags ?? []) used.add(tag);
  const tags = tagsOf(resources);
  doc.tags = [...tags.filter((tag) => used.has(tag.name)), ...[...used].filter((name) => !tags.some((tag) => tag.name === name)).map((name) => ({ name }))];
}
