import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { ErrorResp } from '../errors/error-resp.js';
import { REQUIRED_SCOPE_EXTENSION, SCOPE_RESOURCE_EXTENSION } from '../../auth/decorators/auth.decorators.js';
import { ALL_SCOPES, describeScope } from '../../auth/scopes.js';
import { MAX_ID } from '../pipes/parse-id.pipe.js';
import { envelopeSchemas } from './api-page-response.decorator.js';
import { completeDocument } from './complete-document.js';
import { namedSchemas } from './named-schemas.js';
import { LinkDto } from './link.dto.js';

/** The API version, reported as `info.version` (SPEC §8, §9). */
export const API_VERSION = '1.0.0';

const DESCRIPTION = `Resource-oriented HTTP JSON API.

**Authentication.** \`POST /v1/users\` registers. Then any of: \`POST /v1/login\` returns a
short-lived bearer token (JWT, 300 s) and a refresh token for \`POST /v1/refresh\` — send
\`Authorization: Bearer <token>\`; \`POST /v1/api-keys\` creates a scoped, rate-limited key — send
\`X-API-Key: <key>\`; \`POST /v1/sessions\` sets a \`sid\` cookie — writes then need
\`X-CSRF-Token\`. Credentials in the query string are refused (400). A missing or invalid
credential is 401; a valid one without the role, ownership, scope or CSRF token needed is 403.
Each API key may make \`RATE_LIMIT_PER_MINUTE\` (default 60) requests a minute: its responses carry
\`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`, and a request over the limit
gets 429 with \`Retry-After\`. Repeated failed logins from one address are throttled (429).
Third-party applications use OAuth 2.0 (authorization code with PKCE S256, \`oauth2\` scheme):
their access tokens are bearer JWTs limited to the scopes the user approved, exactly like API keys;
the token and revocation endpoints answer RFC 6749 \`{error, error_description}\` bodies instead of
\`ErrorResp\`. Metadata: \`/.well-known/oauth-authorization-server\`.

**Lists.** Collections return \`{data, page, size, total, links}\`. Page with \`page\`/\`size\`
(size ≤ 100) or \`offset\`/\`limit\`; sort with \`sort=-created_at,title\`; filter with
\`field=value\` (repeat for "any of"); pick fields with \`fields=title,status\`.

**Errors.** Every error is an \`ErrorResp\`: \`{error, code, details?, request_id}\`. 400 for a
malformed request (missing field, wrong type, unknown property or parameter), 422 for a value that
breaks a rule. Every response carries \`X-Request-Id\` (yours when you send a sane one).

**Writes.** Bodies are JSON objects (\`Content-Type: application/json\`; PATCH also
\`application/merge-patch+json\`, with \`null\` clearing an optional field), at most 100 KiB.
POST answers 201 with \`Location\`, DELETE 204.`;

type Parameter = { in?: string; name?: string; description?: string; schema?: Record<string, unknown> };
type Operation = Record<string, unknown> & { security?: Record<string, string[]>[]; 'x-public'?: boolean; parameters?: Parameter[] };

/**
 * Adds the `oauth2` requirement with the operation's scope to a protected operation (issue 7):
 * `@RequireScope(scope)`, else `<resource>:read|write` of `@Authenticated(resource)`; operations
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

/** Path ids (`id`, `comment_id`, …) all go through ParseIdPipe: document them once here (SPEC §1, §8). */
function describeIdParameters(operation: Operation, path: string): void {
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'path' || !/^(id|[a-z]+_id)$/.test(parameter.name ?? '')) continue;
    // the collection segment before `{name}`: /v1/api-keys/{id} → "api key"
    const resource = new RegExp(`/([a-z-]+)/\\{${parameter.name}\\}`).exec(path)?.[1].replace(/s$/, '').replace(/-/g, ' ') ?? 'resource';
    parameter.schema = { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_ID, example: 1 };
    parameter.description ??= `The ${resource} id: a positive integer (anything else → 400).`;
  }
}

/**
 * Builds the OpenAPI 3.0 document from the running application's controllers and the Swagger
 * plugin's metadata (src/metadata.ts): adds the shared `ErrorResp`, `Link` and `…List` schemas
 * and removes the security requirement from public operations.
 */
export async function buildOpenApiDocument(app: INestApplication): Promise<OpenAPIObject> {
  try {
    const generated = '../../metadata.js'; // written by scripts/swagger-metadata.mjs; not type-checked on purpose
    const { default: metadata } = (await import(generated)) as { default: () => Promise<Record<string, any>> };
    await SwaggerModule.loadPluginMetadata(metadata);
  } catch {
    // metadata.ts is generated by `npm run build`/`npm test`; without it the explicit decorators still document every operation
  }
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
        description: 'Access token from POST /v1/login (300 s). Signed JWS following RFC8725: the algorithm is pinned (HS256, or RS256 with a kid), `alg: none`, a missing `exp` and denied tokens are refused.',
      },
      'bearer',
    )
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key from POST /v1/api-keys, limited to its scopes and rate-limited' }, 'api_key')
    .addCookieAuth('sid', { type: 'apiKey', in: 'cookie', name: 'sid', description: 'Session cookie from POST /v1/sessions; writes also need X-CSRF-Token' }, 'session')
    .addOAuth2(
      {
        type: 'oauth2',
        description:
          'OAuth 2.0 authorization code with PKCE (S256 only) for third-party applications registered by an admin (POST /v1/oauth-clients). The access token is a bearer JWT limited to the approved scopes, a signed JWS following RFC8725 as for the `bearer` scheme. To authorize from this page, register a public client with the redirect URI `<origin>/docs/oauth2-redirect.html`.',
        flows: {
          authorizationCode: {
            authorizationUrl: '/v1/oauth/authorize',
            tokenUrl: '/v1/oauth/token',
            refreshUrl: '/v1/oauth/token',
            scopes: Object.fromEntries(ALL_SCOPES.map((scope) => [scope, describeScope(scope)])),
          },
        },
      },
      'oauth2',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorResp, LinkDto] });
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, ...envelopeSchemas(), ...namedSchemas() } as typeof document.components.schemas;
  for (const [path, pathItem] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(pathItem) as [string, Operation][]) {
      if (!operation || typeof operation !== 'object') continue;
      addOAuthRequirement(operation, method);
      if (operation['x-public']) {
        delete operation.security;
        delete operation['x-public'];
      }
      describeIdParameters(operation, path);
    }
  }
  // the API is public to client developers, not internal (OWASP API9 inventory)
  for (const server of document.servers ?? []) Object.assign(server, { 'x-internal': false });
  completeDocument(document);
  return document;
}

function basicAuth(username: string, password: string) {
  const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
  return (req: Request, res: Response, next: NextFunction) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="docs"');
    res.status(401).json({ error: 'authentication required', code: 'unauthorized', request_id: (req as { id?: string }).id ?? '' });
  };
}

/**
 * Serves the docs page at `/docs` and the document at `/docs/openapi.json` and `.yaml` (SPEC §8):
 * on in development and test; in production only with DOCS_USERNAME/DOCS_PASSWORD, behind HTTP
 * Basic auth (401 without it).
 */
export async function setupDocs(app: INestApplication, env: { NODE_ENV: string; DOCS_USERNAME?: string; DOCS_PASSWORD?: string }): Promise<void> {
  if (env.NODE_ENV === 'production') {
    if (!env.DOCS_USERNAME || !env.DOCS_PASSWORD) return;
    app.use('/docs', basicAuth(env.DOCS_USERNAME, env.DOCS_PASSWORD));
  }
  const document = await buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'resource-api docs',
    swaggerOptions: { persistAuthorization: true, initOAuth: { usePkceWithAuthorizationCodeGrant: true } },
  });
}
