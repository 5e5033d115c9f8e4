import { type INestApplication, RequestMethod } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { ErrorResp } from '../common/errors/error-resp.js';
import { writeErrorResp } from '../common/errors/write-error.js';
import { REQUIRED_SCOPE_EXTENSION, SCOPE_RESOURCE_EXTENSION } from '../auth/decorators/auth.decorators.js';
import { MAX_ID } from '../common/pipes/parse-id.pipe.js';
import { derivedOperationId } from './operation-ids.js';
import { fillRegisteredLists, RESOURCE_REGISTRY, type ResourceRegistry } from '../common/resources/resource-registry.js';
import { envelopeSchemas } from '../common/openapi/api-page-response.decorator.js';
import type { Env } from '../config/env.validation.js';
import { API_VERSIONS, type ApiVersion, DOCUMENT_VERSIONS, LATEST_VERSION } from '../common/versioning/api-versions.js';
import { deprecationDates, type VersionDates } from '../common/versioning/deprecation.js';
import { namedSchemas } from '../common/openapi/named-schemas.js';
import { applyValidationRules } from '../common/openapi/validation-rules.js';
import { RouteTable } from '../common/routing/route-table.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { versionDocument } from './version-document.js';

/** `info.version` of the newest document, the one at `/docs/openapi.json` (README.md#api-documentation-and-clients, docs/versioning.md). */
export const API_VERSION = DOCUMENT_VERSIONS[LATEST_VERSION];

const DESCRIPTION = `Resource-oriented HTTP JSON API.

**Authentication.** \`POST /v{version}/users\` registers. Then any of: \`POST /v{version}/login\` returns a
short-lived bearer token (JWT, 300 s) and a refresh token for \`POST /v{version}/refresh\` — send
\`Authorization: Bearer <token>\`; \`POST /v{version}/api-keys\` creates a scoped, rate-limited key — send
\`X-API-Key: <key>\`; \`POST /v{version}/sessions\` sets a \`sid\` cookie — writes then need
\`X-CSRF-Token\`. Credentials in the query string are refused (400). A missing or invalid
credential is 401; a valid one without the role, ownership, scope or CSRF token needed is 403.
**Rate limits.** Every caller is limited, each request in one policy: an API key per key
(\`RATE_LIMIT_PER_MINUTE\`, default 60 a minute), a user per user whatever the credential (bearer,
session, OAuth token: default 600 a minute), anonymous requests per client address (default 120 a
minute); registrations (20 an hour), sign-ins (login, sessions, the OAuth sign-in form: 20 a minute)
per address and password changes per user (10 an hour) each in a tighter policy of their own.
Responses carry \`RateLimit-Policy: "user";q=600;w=60\` and \`RateLimit: "user";r=599;t=42\`
(draft-ietf-httpapi-ratelimit-headers-10) and \`RateLimit-Limit\`, \`RateLimit-Remaining\`,
\`RateLimit-Reset\`; a request over the quota gets 429 \`rate_limited\` with \`Retry-After\`.
Repeated failed logins from one address are throttled too (429).
Third-party applications use OAuth 2.0 (authorization code with PKCE S256, \`oauth2\` scheme):
their access tokens are bearer JWTs limited to the scopes the user approved, exactly like API keys;
the token and revocation endpoints answer RFC 6749 \`{error, error_description}\` bodies instead of
\`ErrorResp\`. Metadata: \`/.well-known/oauth-authorization-server\`.

**Lists.** Collections return \`{data, page, size, total, links}\`. Page with \`page\`/\`size\`
(size ≤ 100) or \`offset\`/\`limit\`; sort with \`sort=-created_at,title\`; filter with
\`field=value\` (repeat for "any of"); pick fields with \`fields=title,status\`.

**Errors.** Every error is an \`ErrorResp\`: \`{error, code, details?, request_id}\`. 400 for a
malformed request (missing field, wrong type, unknown property or parameter), 422 for a value that
breaks a rule. Every response carries \`X-Request-Id\` (yours when you send a sane one). A
request the HTTP parser refuses before any operation is chosen gets an \`ErrorResp\` too, with
\`Connection: close\`: request line and headers over 16 KiB → 431, a malformed request → 400.

**Writes.** Bodies are JSON objects (\`Content-Type: application/json\`; PATCH also
\`application/merge-patch+json\`, with \`null\` clearing an optional field), at most 100 KiB
after decompression (\`Content-Encoding\`: \`gzip\`, \`deflate\` or \`br\`; another → 415), valid UTF-8,
nested at most 32 levels deep. No string — body, query parameter or path — may contain U+0000, and
no body string an unpaired surrogate (400 naming the field).
POST answers 201 with \`Location\`, DELETE 204.`;

/** The "Versions" paragraph of a version's document: what it is, how to choose it, its dates. */
function versionsParagraph(version: ApiVersion, dates: Record<string, VersionDates>): string {
  const own = dates[version];
  const status =
    version === LATEST_VERSION
      ? `This is **API v${version}**, the newest. Its breaking change against v1: \`author\` of articles and comments is the embedded \`{id, username, name}\` of the user instead of an integer id (the \`author\` filter still takes an id). Everything else is unchanged.`
      : `This is **API v${version}**.` +
        (own
          ? ` Its articles and comments operations are **deprecated** since ${own.deprecatedAt.toISOString().slice(0, 10)} and reach their **sunset** on ${own.sunsetAt.toISOString().slice(0, 10)} (${own.sunsetAt.toISOString()}): after that date v${version} is no longer served. Their responses carry \`Deprecation\`, \`Sunset\` and \`Link: <…>; rel="successor-version"\`. Move to v${LATEST_VERSION} (document at \`/docs/v${LATEST_VERSION}/openapi.json\`).`
          : '');
  return `**Versions.** ${status} The version is the path prefix (\`/v1\`, \`/v2\`), the canonical form used in links and \`Location\`. On an unprefixed path it may instead be chosen with \`Accept: application/vnd.resource-api.v2+json\` (an unknown version → 406; a prefix and a header that disagree → 400; responses then carry \`Vary: Accept\`) or with a version subdomain, \`v2.<host>\`. Documents: ${API_VERSIONS.map((v) => `\`/docs/v${v}/openapi.json\``).join(', ')}; \`/docs/openapi.json\` is the newest.`;
}

type Parameter = { in?: string; name?: string; description?: string; schema?: Record<string, unknown> };
type Operation = Record<string, unknown> & { security?: Record<string, string[]>[]; 'x-public'?: boolean; parameters?: Parameter[] };

/**
 * Adds the `oauth2` requirement with the operation's scope to a protected operation:
 * `@RequireScope(scope)`, else `<resource>:read|write` of `@ScopedResource(resource)`; operations
 * closed to scoped credentials (`@RequireScope(null)`, or no resource) get none.
 */
function addOAuthRequirement(operation: Operation, method: string): void {
  const explicit = operation[REQUIRED_SCOPE_EXTENSION] as string | undefined;
  const resource = operation[SCOPE_RESOURCE_EXTENSION] as string | undefined;
  delete operation[REQUIRED_SCOPE_EXTENSION];
  delete operation[SCOPE_RESOURCE_EXTENSION];
  const scope = explicit !== undefined ? (explicit === 'none' ? null : explicit) : resource ? `${resource}:${method === 'get' || method === 'head' ? 'read' : 'write'}` : null;
  // a new array: the generator shares one security list between the operations of a controller
  if (scope && Array.isArray(operation.security) && operation.security.length > 0) operation.security = [...operation.security, { oauth2: [scope] }];
}

/**
 * Path ids (`id`, `comment_id`, …) go through ParseIdPipe: document them once here
 * (docs/wire.md#ids, README.md#api-documentation-and-clients). An id an operation declares as a
 * string itself (`@ApiParam`: the event log's `evt_…` ids) keeps its declaration.
 */
function describeIdParameters(operation: Operation, path: string): void {
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'path' || !/^(id|[a-z]+_id)$/.test(parameter.name ?? '')) continue;
    if ((parameter.schema as { type?: string } | undefined)?.type === 'string') continue;
    // the collection segment before `{name}`: /v1/api-keys/{id} → "api key"
    const resource = new RegExp(`/([a-z-]+)/\\{${parameter.name}\\}`).exec(path)?.[1].replace(/s$/, '').replace(/-/g, ' ') ?? 'resource';
    parameter.schema = { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_ID, example: 1 };
    parameter.description ??= `The ${resource} id: a positive integer (anything else → 400).`;
  }
}

/**
 * Gives an operation the id a client generator names its method after (README.md#api-documentation-and-clients):
 * a resource operation's derived from its kind and declaration ({@link derivedOperationId}:
 * `listTodos`, `getTodo`, …), the same in every version; another operation keeps the one it names
 * itself (`@ApiOperation({ operationId: 'login' })`).
 * @throws Error at document build naming the operation when it has neither (Nest's default,
 *   `<Controller>_<method>`, would reach the document).
 */
function nameOperation(operation: Operation, method: string, path: string): void {
  const id = operation.operationId as string | undefined;
  if (id !== undefined && !/^\w+Controller_/.test(id)) return;
  const derived = derivedOperationId(method, path, (operation.tags as string[] | undefined)?.[0]);
  if (!derived) throw new Error(`${method.toUpperCase()} ${path}: no operation id — name it with @ApiOperation({ operationId: 'verbNoun' })`);
  operation.operationId = derived;
}

/**
 * Hands the Swagger plugin's metadata (src/metadata.ts, generated by `npm run build`/`npm test`) to
 * the document generator; without the file the explicit decorators still document every operation.
 * Asynchronous (the file is imported), so it runs before the documents are built.
 */
async function loadPluginMetadata(): Promise<void> {
  try {
    const generated = '../metadata.js'; // written by scripts/swagger-metadata.mjs; not type-checked on purpose
    const { default: metadata } = (await import(generated)) as { default: () => Promise<Record<string, any>> };
    await SwaggerModule.loadPluginMetadata(metadata);
  } catch {
    // metadata.ts is generated by `npm run build`/`npm test`; without it the explicit decorators still document every operation
  }
}

/**
 * Builds the OpenAPI 3.0 document of every controller from the application and the Swagger
 * plugin's metadata ({@link loadPluginMetadata} first): adds the shared `ErrorResp`, `Link` and `…List` schemas,
 * writes the registry's scopes and event types where the decorators name them
 * ({@link fillRegisteredLists}) and the validators' rules the plugin cannot state into the DTO
 * schemas ({@link applyValidationRules}), and removes the security requirement from public operations.
 * Cut per version by {@link versionDocuments}.
 */
function buildCombinedDocument(app: INestApplication, registry: ResourceRegistry): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('resource-api')
    .setDescription(DESCRIPTION)
    .setVersion(API_VERSION)
    .addServer('/', 'The origin serving this document (local, staging or production alike): paths are relative to it.')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'Access token from POST /v{version}/login (300 s). Signed JWS following RFC8725: the algorithm is pinned (HS256, or RS256 with a kid), `alg: none`, a missing `exp` and denied tokens are refused.',
      },
      'bearer',
    )
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key from POST /v{version}/api-keys, limited to its scopes and rate-limited' }, 'api_key')
    .addCookieAuth('sid', { type: 'apiKey', in: 'cookie', name: 'sid', description: 'Session cookie from POST /v{version}/sessions; writes also need X-CSRF-Token' }, 'session')
    .addOAuth2(
      {
        type: 'oauth2',
        description:
          'OAuth 2.0 authorization code with PKCE (S256 only) for third-party applications registered by an admin (POST /v{version}/oauth-clients). The access token is a bearer JWT limited to the approved scopes, a signed JWS following RFC8725 as for the `bearer` scheme. To authorize from this page, register a public client with the redirect URI `<origin>/docs/oauth2-redirect.html`.',
        flows: {
          authorizationCode: {
            authorizationUrl: '/v{version}/oauth/authorize',
            tokenUrl: '/v{version}/oauth/token',
            refreshUrl: '/v{version}/oauth/token',
            scopes: Object.fromEntries(registry.scopes.map((scope) => [scope, registry.describeScope(scope)])),
          },
        },
      },
      'oauth2',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorResp, LinkDto] });
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, ...envelopeSchemas(), ...namedSchemas() } as typeof document.components.schemas;
  fillRegisteredLists(document, registry);
  // the validators the Swagger plugin's metadata cannot carry (IsNotEmpty, a Matches of a constant or with `each`)
  applyValidationRules(document.components.schemas as Record<string, Record<string, any>>);
  for (const [path, pathItem] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(pathItem) as [string, Operation][]) {
      if (!operation || typeof operation !== 'object') continue;
      addOAuthRequirement(operation, method);
      if (operation['x-public']) {
        delete operation.security;
        delete operation['x-public'];
      }
      describeIdParameters(operation, path);
      nameOperation(operation, method, path);
    }
  }
  // the API is public to client developers, not internal (OWASP API9 inventory)
  for (const server of document.servers ?? []) Object.assign(server, { 'x-internal': false });
  return document;
}

/**
 * The OpenAPI 3.0 document of each API version (README.md#api-documentation-and-clients, docs/versioning.md): `1` → `info.version` 1.y.z with
 * the `/v1` paths (articles and comments deprecated, with the dates of V1_DEPRECATED_AT and
 * V1_SUNSET_AT), `2` → 2.y.z with the `/v2` paths; both with the unversioned ones; each
 * completed (errors, headers, examples: complete-document.ts) for the resources the application
 * was given ({@link RESOURCE_REGISTRY}). Versioning must be enabled (enableApiVersioning) before.
 */
export async function buildOpenApiDocuments(app: INestApplication): Promise<Record<ApiVersion, OpenAPIObject>> {
  await loadPluginMetadata();
  return versionDocuments(app);
}

/** {@link buildOpenApiDocuments} once the plugin's metadata is loaded: synchronous, so the docs routes can build the documents when first asked. */
function versionDocuments(app: INestApplication): Record<ApiVersion, OpenAPIObject> {
  const registry = app.get<ResourceRegistry>(RESOURCE_REGISTRY);
  const combined = buildCombinedDocument(app, registry);
  const config = app.get<ConfigService<Env, true>>(ConfigService);
  const dates = deprecationDates({ V1_DEPRECATED_AT: config.get('V1_DEPRECATED_AT', { infer: true }), V1_SUNSET_AT: config.get('V1_SUNSET_AT', { infer: true }) });
  const documents = {} as Record<ApiVersion, OpenAPIObject>;
  for (const version of API_VERSIONS) {
    documents[version] = versionDocument(combined, version, `${DESCRIPTION}\n\n${versionsParagraph(version, dates)}`, dates, registry.resources);
  }
  return documents;
}

function basicAuth(username: string, password: string) {
  const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
  return (req: Request, res: Response, next: NextFunction) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    writeErrorResp(req, res, 401, 'authentication required', { 'WWW-Authenticate': 'Basic realm="docs"' });
  };
}

/**
 * Serves the docs (README.md#api-documentation-and-clients, docs/versioning.md): each version's document at `/docs/v<n>/openapi.json` (and
 * `.yaml`), the newest also at `/docs/openapi.json`, and the page at `/docs` offering every version
 * (newest first). On in development and test; in production only with
 * DOCS_USERNAME/DOCS_PASSWORD, behind HTTP Basic auth (401 without it). Its GET paths are added
 * to the {@link RouteTable}, so another method on them is 405 with `Allow: GET, HEAD` (docs/wire.md#paths).
 * The documents are built by the first request for one of these paths and kept (the same documents
 * as {@link buildOpenApiDocuments}); start-up only registers the routes.
 */
export async function setupDocs(app: INestApplication, env: { NODE_ENV: string; DOCS_USERNAME?: string; DOCS_PASSWORD?: string }): Promise<void> {
  if (env.NODE_ENV === 'production') {
    if (!env.DOCS_USERNAME || !env.DOCS_PASSWORD) return;
    app.use('/docs', basicAuth(env.DOCS_USERNAME, env.DOCS_PASSWORD));
  }
  // built when a docs path is first requested, not at start-up: generating them takes a second of
  // CPU, which a process that never serves its docs (most production ones) would pay at every start
  await loadPluginMetadata();
  let documents: Record<ApiVersion, OpenAPIObject> | undefined;
  const document = (version: ApiVersion) => (): OpenAPIObject => (documents ??= versionDocuments(app))[version];
  for (const version of API_VERSIONS) {
    SwaggerModule.setup(`docs/v${version}`, app, document(version), {
      ui: false,
      raw: ['json', 'yaml'],
      jsonDocumentUrl: `docs/v${version}/openapi.json`,
      yamlDocumentUrl: `docs/v${version}/openapi.yaml`,
    });
  }
  const newestFirst = [...API_VERSIONS].reverse();
  SwaggerModule.setup('docs', app, document(LATEST_VERSION), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'resource-api docs',
    explorer: true,
    swaggerOptions: {
      persistAuthorization: true,
      initOAuth: { usePkceWithAuthorizationCodeGrant: true },
      urls: newestFirst.map((version) => ({ url: `/docs/v${version}/openapi.json`, name: `v${version} (${DOCUMENT_VERSIONS[version]}${version === LATEST_VERSION ? ', newest' : ''})` })),
    },
  });
  // the GET routes SwaggerModule registered above, outside the controllers: other methods → 405
  const served = ['/docs', '/docs/', '/docs/index.html', '/docs/LICENSE', '/docs/swagger-ui-init.js', '/docs/openapi.json', '/docs/openapi.yaml'];
  for (const version of API_VERSIONS) served.push(`/docs/v${version}/openapi.json`, `/docs/v${version}/openapi.yaml`);
  app.get(RouteTable).addRoutes(served.map((path) => ({ path, method: RequestMethod.GET })));
}
