import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import type { NextFunction, Request, Response } from 'express';
import type { HttpServer } from '@nestjs/common';
import type { RouteMatchingOptions } from '@nestjs/common/internal';
import { buildOpenApiDocuments } from '../../src/openapi/docs.js';
import { EXPRESS_DEFAULT_MATCHING } from '../../src/common/routing/route-table.js';
import { type ApiVersion, isApiVersion, LATEST_VERSION, versionOfPath } from '../../src/common/versioning/api-versions.js';
import { servedUrl } from '../../src/common/versioning/version-negotiation.js';

/**
 * "True to the service": every response an e2e test receives from an application booted
 * by createTestApp is checked against the OpenAPI document that application serves for the
 * response's API version (`/v1/…` against `/docs/v1/openapi.json`, `/v2/…` — also when
 * the version was chosen by `Accept` or subdomain — against the v2 one, unversioned paths against
 * the newest) —
 *
 * - the request's path and method are matched against the document's path templates as the router
 *   matches paths (the HTTP adapter's options; Express: case-insensitive, one trailing slash
 *   optional — docs/wire.md#paths), so `POST /v1/OAuth/Token/` is checked as `POST /v1/oauth/token`; the status
 *   must be one the operation documents, and the body must validate against that response's
 *   schema (objects are closed: a property the schema does not list is a violation; a `writeOnly`
 *   property in a response is a violation; `nullable: true` is honoured; with the documented
 *   `fields` parameter only `id`, `links` and the requested fields are required; an `anyOf` of a
 *   schema and its `…Sparse` variant is checked against the full schema so narrowed, never the
 *   looser sparse one);
 * - the content type must be a documented one, a response without documented content (204) must
 *   have an empty body; documented response headers must be present when `required` and match
 *   their schema when present;
 * - a path + method the document does not have may only answer an error, with an `ErrorResp`
 *   body (unknown routes 404, known paths 405), except the docs pages themselves (`/docs*`);
 * - CORS preflights (OPTIONS with `Access-Control-Request-Method`) are not operations: not checked.
 *
 * Violations are collected in {@link violationStore} and turned into a failure of the running
 * test by openapi-assertions.ts (a `setupFilesAfterEnv` file).
 */

type Schema = Record<string, unknown>;
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsModule as unknown as { default?: FormatsPlugin }).default ?? formatsModule) as unknown as FormatsPlugin;

/** One response that breaks the document. */
export interface Violation {
  method: string;
  path: string;
  status: number;
  problems: string[];
}

/** Shared through globalThis: loadFreshApp() re-imports this module, the assertions file must see one store. */
export interface ViolationStore {
  violations: Violation[];
  /** Responses checked (for the report printed with OPENAPI_VALIDATION_REPORT). */
  validated: number;
}

const STORE_KEY = Symbol.for('resource-api.openapi-validation');

export function violationStore(): ViolationStore {
  const holder = globalThis as unknown as Record<symbol, ViolationStore | undefined>;
  return (holder[STORE_KEY] ??= { violations: [], validated: 0 });
}

/** Paths the document does not describe on purpose, which may answer successfully: the docs themselves, and the Prometheus metrics (README "Metrics"). */
const UNDOCUMENTED_PATHS = [/^\/docs(\/|$|-)/, /^\/metrics$/];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const REF_BASE = 'openapi.json';

interface DocumentedResponse {
  headers?: Record<string, Schema>;
  content?: Record<string, { schema?: Schema }>;
}

interface Operation {
  template: string;
  method: string;
  operation: Record<string, any>;
}

/** Validates responses against one application's document; schemas compile lazily and are cached. */
export class ResponseValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, verbose: false });
  private readonly routes: Array<{ regex: RegExp; template: string; params: number }>;
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly components: Record<string, Schema>;

  /** `matching`: how the router matches paths (default: Express's, what the application runs with). */
  constructor(
    private readonly document: OpenAPIObject,
    matching: RouteMatchingOptions = EXPRESS_DEFAULT_MATCHING,
  ) {
    addFormats(this.ajv);
    this.ajv.addKeyword({
      keyword: 'x-write-only',
      errors: true,
      validate: function writeOnly(this: unknown) {
        (writeOnly as unknown as { errors: Partial<ErrorObject>[] }).errors = [
          { keyword: 'x-write-only', message: 'is writeOnly: never part of a response', params: {} },
        ];
        return false;
      },
    });
    const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
    const composed = new Set<string>();
    collectComposedRefs(schemas, composed);
    collectComposedRefs(document.paths, composed);
    this.components = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, toAjv(schema, !composed.has(name)) as Schema]));
    this.ajv.addSchema({ $id: REF_BASE, components: { schemas: this.components } });
    this.routes = Object.keys(document.paths)
      .map((template) => ({
        template,
        params: (template.match(/\{[^}]+\}/g) ?? []).length,
        regex: new RegExp(
          `^${template
            .split(/\{[^}]+\}/)
            .map(escapeRegExp)
            .join('[^/]+')}${matching.ignoreTrailingSlash ? '/?' : ''}$`,
          matching.caseSensitive ? '' : 'i',
        ),
      }))
      // a literal segment wins over a template parameter (/v1/sessions/current before /v1/sessions/{id})
      .sort((a, b) => a.params - b.params);
  }

  /** The documented operation of a request, `undefined` when the path or method is not documented. */
  find(method: string, path: string): Operation | undefined {
    const lookup = method === 'head' ? 'get' : method;
    for (const route of this.routes) {
      if (!route.regex.test(path)) continue;
      const operation = (this.document.paths[route.template] as Record<string, any>)[lookup];
      if (operation && METHODS.includes(lookup)) return { template: route.template, method: lookup, operation };
    }
    return undefined;
  }

  /** Problems of one response (empty when it is true to the document). */
  check(
    request: { method: string; path: string; query: URLSearchParams },
    response: { status: number; header: (name: string) => string | undefined; body: Buffer },
  ): string[] {
    const { status, body: raw } = response;
    const method = request.method.toLowerCase();
    const found = this.find(method, request.path);
    const contentType = response.header('content-type');
    const mediaType = contentType?.split(';')[0].trim().toLowerCase();
    // a HEAD response is the GET response without its body
    if (method === 'head' && raw.length > 0) return [`HEAD answered with a ${raw.length}-byte body`];
    const errorResp = { $ref: `${REF_BASE}#/components/schemas/ErrorResp` };
    if (!found) {
      const allowed = UNDOCUMENTED_PATHS.some((pattern) => pattern.test(request.path));
      if (status < 400) return allowed ? [] : [`${status} for a path and method the document does not have`];
      return method === 'head' ? [] : this.checkBody('ErrorResp', errorResp, mediaType, raw);
    }
    const where = `${found.method.toUpperCase()} ${found.template}`;
    const responses = (found.operation.responses ?? {}) as Record<string, DocumentedResponse>;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((candidate) => responses[candidate]);
    if (!key) return [`status ${status} is not documented for ${where} (documented: ${Object.keys(responses).join(', ')})`];
    const problems = this.checkHeaders(`${where} ${status}`, responses[key].headers ?? {}, response.header);
    const content = responses[key].content;
    if (!content || Object.keys(content).length === 0) {
      if (raw.length > 0 || (status === 204 && contentType))
        problems.push(`${status} of ${where} documents no body, but got ${contentType ?? 'no content type'} with ${raw.length} bytes`);
      return problems;
    }
    if (status === 204 || status === 304) return [...problems, `${where} documents content for ${status}, which never has a body`];
    if (!mediaType || !content[mediaType])
      return [
        ...problems,
        `content type ${contentType ?? '(none)'} is not documented for ${status} of ${where} (documented: ${Object.keys(content).join(', ')})`,
      ];
    // `anyOf` a schema and its `…Sparse` variant (operations taking `fields`): the full schema
    // without `fields`, the same with `required` narrowed to the requested fields with it — never
    // the looser sparse variant, so every response is checked as strictly as before
    const schema = fullVariant(content[mediaType].schema);
    // a text body (the OAuth HTML pages, documented as `type: string`) is a string whatever it says
    if (!schema || method === 'head' || mediaType.startsWith('text/')) return problems;
    const fields = found.operation.parameters?.some((p: { in: string; name: string }) => p.in === 'query' && p.name === 'fields')
      ? request.query.get('fields')
      : null;
    const requested = fields !== null && status < 300 ? ['id', 'links', ...fields.split(',')].sort() : undefined;
    const cacheKey = `${where} ${status} ${mediaType}${requested ? ` fields=${requested.join(',')}` : ''}`;
    return [
      ...problems,
      ...this.checkBody(
        cacheKey,
        () => {
          const converted = toAjv(schema, true) as Schema;
          return requested ? this.sparse(converted, requested) : converted;
        },
        mediaType,
        raw,
      ),
    ];
  }

  /** Documented response headers: present when `required`, and their values valid when present. */
  private checkHeaders(where: string, headers: Record<string, Schema>, header: (name: string) => string | undefined): string[] {
    const problems: string[] = [];
    for (const [name, reference] of Object.entries(headers)) {
      if (name.toLowerCase() === 'content-type') continue; // ignored by OpenAPI: the media type says it
      const definition = this.resolveHeader(reference);
      const value = header(name);
      if (value === undefined) {
        if (definition.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (!definition.schema) continue;
      const cacheKey = `${where} header ${name}`;
      let validate = this.cache.get(cacheKey);
      if (!validate) {
        validate = this.ajv.compile(toAjv(definition.schema, true) as Schema);
        this.cache.set(cacheKey, validate);
      }
      const type = (definition.schema as Schema).type;
      const typed = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      if (!validate(typed))
        problems.push(...(validate.errors ?? []).map((error) => `header ${name}: ${JSON.stringify(value)} ${error.message ?? error.keyword}`));
    }
    return problems;
  }

  private resolveHeader(reference: Schema): Schema {
    const ref = reference.$ref as string | undefined;
    if (!ref) return reference;
    const name = ref.replace('#/components/headers/', '');
    return ((this.document.components?.headers ?? {}) as Record<string, Schema>)[name] ?? {};
  }

  private checkBody(cacheKey: string, schema: Schema | (() => Schema), mediaType: string | undefined, raw: Buffer): string[] {
    if (mediaType !== 'application/json' && !mediaType?.endsWith('+json')) return [`expected a JSON body, got content type ${mediaType ?? '(none)'}`];
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return [`body is not valid JSON: ${JSON.stringify(raw.toString('utf8').slice(0, 200))}`];
    }
    let validate = this.cache.get(cacheKey);
    if (!validate) {
      validate = this.ajv.compile(typeof schema === 'function' ? schema() : schema);
      this.cache.set(cacheKey, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (error) => `body${error.instancePath || ''} ${error.message ?? error.keyword}${describeParams(error)} (schema ${error.schemaPath})`,
    );
  }

  /**
   * With `fields`, a resource carries only `id`, `links` and the requested fields: the resource
   * schema (a read's body or a list's `data` items) keeps its properties with `required` narrowed.
   */
  private sparse(schema: Schema, requested: string[]): Schema {
    const resolved = this.resolve(schema);
    const properties = resolved.properties as Record<string, Schema> | undefined;
    const items = properties?.data?.type === 'array' ? (properties.data.items as Schema) : undefined;
    if (items && Array.isArray(resolved.required) && resolved.required.includes('links') && resolved.required.includes('size')) {
      return { ...resolved, properties: { ...properties, data: { ...properties!.data, items: this.sparse(items, requested) } } };
    }
    return { ...resolved, required: ((resolved.required as string[] | undefined) ?? []).filter((name) => requested.includes(name)) };
  }

  private resolve(schema: Schema): Schema {
    const ref = schema.$ref as string | undefined;
    if (!ref) return schema;
    const name = ref.slice(`${REF_BASE}#/components/schemas/`.length);
    return this.components[name] ?? schema;
  }
}

/**
 * Copies a schema into what Ajv validates: `$ref`s point into the registered components,
 * OpenAPI 3.0 `nullable: true` becomes a `null` alternative, `writeOnly` properties are refused,
 * and object schemas with `properties` are closed (unless composed with `allOf`, or they say
 * otherwise with `additionalProperties`).
 */
function toAjv(node: unknown, close: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => toAjv(item, close));
  if (!node || typeof node !== 'object') return node;
  const source = node as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'example' || key === 'examples') {
      out[key] = value;
    } else if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) {
      out[key] = `${REF_BASE}${value}`;
    } else if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value as Schema).map(([name, property]) => [name, toAjv(property, close)]));
    } else if (key === 'allOf') {
      out[key] = toAjv(value, false);
    } else if (key !== 'nullable' && key !== 'writeOnly') {
      out[key] = toAjv(value, close);
    }
  }
  if (close && out.properties && out.additionalProperties === undefined && !out.allOf && !out.anyOf && !out.oneOf) out.additionalProperties = false;
  if (source.writeOnly === true) out['x-write-only'] = true;
  if (source.nullable === true) {
    if (typeof out.type === 'string' && !out.$ref && !out.allOf && !out.anyOf && !out.oneOf) {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
      return out;
    }
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/**
 * Components referenced from an `allOf` of several branches are left open: closing them would
 * refuse the other branches' properties. A one-branch `allOf` (how the generator attaches a
 * description or `readOnly` to a `$ref`) composes nothing, so its component stays closed.
 */
function collectComposedRefs(node: unknown, into: Set<string>, inAllOf = false): void {
  if (Array.isArray(node)) {
    for (const item of node) collectComposedRefs(item, into, inAllOf);
    return;
  }
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && inAllOf && typeof value === 'string') into.add(value.replace('#/components/schemas/', ''));
    else collectComposedRefs(value, into, (key === 'allOf' && Array.isArray(value) && value.length > 1) || (inAllOf && Array.isArray(node)));
  }
}

/** The full branch of `anyOf: [Full, FullSparse]` (complete-document.ts), or the schema itself. */
function fullVariant(schema: Schema | undefined): Schema | undefined {
  const branches = schema?.anyOf as Schema[] | undefined;
  if (!Array.isArray(branches) || branches.length !== 2) return schema;
  const sparse = branches.findIndex((branch) => /Sparse(List)?$/.test(String(branch.$ref ?? '')));
  return sparse === -1 ? schema : branches[1 - sparse];
}

function describeParams(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (params.additionalProperty) return `: ${String(params.additionalProperty)}`;
  if (params.allowedValues) return `: ${JSON.stringify(params.allowedValues)}`;
  return '';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Installs the recorder as the first middleware of `app` (call before anything else is `use`d).
 * Each response is checked against the application's document of its version just before its
 * last byte is written, so a violation is recorded before the test sees the response. The
 * documents are built by `attach()` after init.
 */
export function installResponseRecorder(app: INestApplication): { attach: () => Promise<void> } {
  let validators: Record<ApiVersion, ResponseValidator> | undefined;
  app.use((req: Request, res: Response, next: NextFunction) => {
    const chunks: Buffer[] = [];
    const toBuffer = (chunk: unknown, encoding?: unknown) =>
      Buffer.isBuffer(chunk)
        ? chunk
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, rest[0]));
      return write(chunk, ...rest);
    }) as Response['write'];
    res.end = ((...args: unknown[]) => {
      const [chunk, encoding] = args;
      if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, encoding));
      // a CORS preflight is the browser asking for permission, not an operation of the API
      const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
      if (validators && !preflight) {
        // the URL as routed: `/v2/articles` for an unprefixed request whose version Accept or the host chose
        const url = new URL(servedUrl(req), 'http://localhost');
        const prefix = versionOfPath(url.pathname);
        const validator = validators[prefix !== undefined && isApiVersion(prefix) ? prefix : LATEST_VERSION];
        const header = (name: string) => {
          const value = res.getHeader(name);
          return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
        };
        const store = violationStore();
        store.validated += 1;
        const problems = validator.check(
          { method: req.method, path: url.pathname, query: url.searchParams },
          { status: res.statusCode, header, body: Buffer.concat(chunks) },
        );
        if (problems.length > 0) store.violations.push({ method: req.method, path: req.originalUrl, status: res.statusCode, problems });
      }
      return end(...args);
    }) as Response['end'];
    next();
  });
  return {
    attach: async () => {
      const documents = await buildOpenApiDocuments(app);
      // declared by the HttpServer interface the adapters implement, not by AbstractHttpAdapter (as RouteTableModule reads it)
      const adapter: HttpServer = app.getHttpAdapter();
      const matching = adapter.getRouteMatchingOptions?.();
      validators = Object.fromEntries(Object.entries(documents).map(([version, document]) => [version, new ResponseValidator(document, matching)])) as Record<
        ApiVersion,
        ResponseValidator
      >;
    },
  };
}
