import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorResp } from '../common/errors/error-resp.js';
import { namedSchema } from '../common/openapi/named-schemas.js';
import { registeredCount, registeredList, registeredText } from '../common/resources/resource-registry.js';
import { OAuthErrorResponse } from './oauth-protocol.response.js';
import { AUTHORIZE_RETURN_PATTERN } from './oauth-paths.js';

/** The HTML pages as documented content. */
const HTML = { 'text/html': { schema: { type: 'string', maxLength: 65_536, example: '<!doctype html><html lang="en">…</html>' } } };

const NO_STORE_HEADERS = {
  'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', enum: ['no-store'], example: 'no-store' } },
  Pragma: { description: 'Always `no-cache`.', schema: { type: 'string', enum: ['no-cache'], example: 'no-cache' } },
};

const LOCATION = {
  Location: {
    required: true,
    description: 'Where the browser goes next.',
    schema: {
      type: 'string',
      format: 'uri-reference',
      maxLength: 4096,
      example: 'https://todo-sync.example/callback?code=Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s&state=af0ifjsldkj&iss=https%3A%2F%2Fapi.example.com',
    },
  },
};

/** An HTML page response of the authorize/sign-in endpoints. */
export function ApiHtmlResponse(status: number, description: string, headers?: Record<string, object>) {
  return ApiResponse({ status, description, content: HTML, ...(headers ? { headers } : {}) });
}

/** A redirect response (no body) with `Location`. */
export function ApiRedirectResponse(status: 302 | 303, description: string) {
  return ApiResponse({ status, description, headers: LOCATION });
}

/** 400 of the authorize endpoint: an HTML page (bad client or redirect URI), or `ErrorResp` from the shared pipeline (credential in the query). */
export function ApiAuthorizeBadRequest() {
  return ApiResponse({
    status: 400,
    description:
      'Unknown client, missing or unregistered redirect URI, or a malformed form: an HTML error page, never a redirect (no open redirector). A credential-named query parameter gets the usual `ErrorResp`.',
    content: {
      ...HTML,
      'application/json': {
        schema: { $ref: getSchemaPath(ErrorResp) },
        example: {
          error: 'credentials are not accepted in the query string; send them in a header',
          code: 'bad_request',
          request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90',
        },
      },
    },
  });
}

/**
 * The error responses of the token and revocation endpoints: RFC 6749 §5.2 `OAuthError` bodies
 * (400, 401 `invalid_client` with `WWW-Authenticate: Basic`, 500 `server_error`); a 400 from the
 * shared pipeline (a query parameter) is an `ErrorResp`.
 */
export function ApiOAuthErrors() {
  const oauth = { $ref: getSchemaPath(OAuthErrorResponse) };
  const either = namedSchema('OAuthEndpointError', {
    description:
      'An RFC 6749 `OAuthError` from the endpoint, or an `ErrorResp` from the shared pipeline (a query parameter, an unexpected failure before the endpoint).',
    anyOf: [oauth, { $ref: getSchemaPath(ErrorResp) }],
  });
  const example = { error: 'invalid_grant', error_description: 'Invalid grant: authorization code is invalid' };
  return applyDecorators(
    ApiExtraModels(OAuthErrorResponse),
    ApiResponse({
      status: 400,
      description:
        'RFC 6749 §5.2 error (`OAuthError`): `invalid_request`, `invalid_grant` (bad, expired, used or revoked code or refresh token, wrong PKCE verifier), `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`. An unexpected query parameter gets the usual `ErrorResp`.',
      headers: NO_STORE_HEADERS,
      content: { 'application/json': { schema: either, example } },
    }),
    ApiResponse({
      status: 401,
      description: '`invalid_client`: unknown client, wrong or missing secret of a confidential client, a secret sent by a public client.',
      headers: {
        ...NO_STORE_HEADERS,
        'WWW-Authenticate': {
          required: true,
          description: 'The client authentication scheme.',
          schema: { type: 'string', enum: ['Basic realm="oauth"'], example: 'Basic realm="oauth"' },
        },
      },
      content: { 'application/json': { schema: oauth, example: { error: 'invalid_client', error_description: 'client authentication failed' } } },
    }),
    ApiResponse({
      status: 500,
      description: '`server_error`: unexpected failure; no internals in the body.',
      content: { 'application/json': { schema: either, example: { error: 'server_error', error_description: 'internal server error' } } },
    }),
  );
}

/** The form-urlencoded request body of an OAuth endpoint (RFC 6749 requires it for the token endpoint), as the named schema `name`. */
export function ApiFormBody(name: string, schema: Record<string, unknown>) {
  return applyDecorators(ApiConsumes('application/x-www-form-urlencoded'), ApiBody({ required: true, schema: namedSchema(name, schema) }));
}

const string = (description: string, example: string, extra: Record<string, unknown> = {}) => ({
  type: 'string',
  maxLength: 2048,
  description,
  example,
  ...extra,
});

/** Form fields of the token endpoint. */
export const TOKEN_FORM = {
  type: 'object',
  required: ['grant_type'],
  example: {
    grant_type: 'authorization_code',
    code: 'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s',
    code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    redirect_uri: 'https://todo-sync.example/callback',
    client_id: 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a',
  },
  properties: {
    grant_type: {
      type: 'string',
      enum: ['authorization_code', 'refresh_token'],
      description: 'Only these two: no implicit, password or client-credentials grant.',
      example: 'authorization_code',
    },
    code: string('authorization_code: the code from the redirect (single use, 60 s).', 'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s'),
    code_verifier: string('authorization_code: the PKCE verifier whose S256 hash was the `code_challenge`.', 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', {
      minLength: 43,
      maxLength: 128,
      pattern: '^[A-Za-z0-9._~-]{43,128}$',
    }),
    redirect_uri: string('authorization_code: the same redirect URI as in the authorization request.', 'https://todo-sync.example/callback', { format: 'uri' }),
    refresh_token: string('refresh_token: the current refresh token (each use returns a new one).', 'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s'),
    scope: string('refresh_token: optionally narrower scopes, space-separated.', 'todos:read'),
    client_id: string('The client (client_secret_post, or a public client).', 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a'),
    client_secret: string('client_secret_post only (or use HTTP Basic: client_secret_basic).', 'cs_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s'),
  },
};

/** Form fields of the revocation endpoint (RFC 7009 §2.1). */
export const REVOKE_FORM = {
  type: 'object',
  required: ['token'],
  example: { token: 'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s', token_type_hint: 'refresh_token', client_id: 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a' },
  properties: {
    token: string(
      'The refresh token (revokes the whole grant) or access token (denied until it expires) to revoke.',
      'Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s',
    ),
    token_type_hint: {
      type: 'string',
      enum: ['refresh_token', 'access_token'],
      description: 'Optional; the kind is recognised anyway.',
      example: 'refresh_token',
    },
    client_id: string('The client (client_secret_post, or a public client).', 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a'),
    client_secret: string('client_secret_post only (or use HTTP Basic).', 'cs_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s'),
  },
};

const scopeList = `Space-separated scopes, each one of: ${registeredText('scopes', ', ')}.`;

/** The consent form posted by the consent page. */
export const CONSENT_FORM = {
  type: 'object',
  required: ['client_id', 'redirect_uri', 'response_type', 'scope', 'code_challenge', 'code_challenge_method', 'csrf_token', 'decision'],
  properties: {
    response_type: { type: 'string', enum: ['code'], example: 'code' },
    client_id: string('As in the authorization request.', 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a'),
    redirect_uri: string('As in the authorization request.', 'https://todo-sync.example/callback', { format: 'uri' }),
    scope: string(`As in the authorization request. ${scopeList}`, 'todos:read todos:write'),
    state: string('As in the authorization request; returned unchanged.', 'af0ifjsldkj'),
    code_challenge: string('As in the authorization request.', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', {
      pattern: '^[A-Za-z0-9_-]{43}$',
      maxLength: 43,
    }),
    code_challenge_method: { type: 'string', enum: ['S256'], example: 'S256' },
    csrf_token: string("The session's CSRF token (missing or wrong → 403).", 'k3V9r1b2Qm8xZ0pL4tY7wE2sD6fH9jN1'),
    decision: { type: 'string', enum: ['approve', 'deny'], example: 'approve' },
    grant_scope: {
      type: 'array',
      maxItems: registeredCount('scopes'),
      items: { type: 'string', enum: registeredList('scopes') },
      description: 'The scopes the user left checked (repeat the field); none approved counts as a denial.',
      example: ['todos:read'],
    },
  },
};

/** The sign-in form of the authorize endpoint. */
export const SIGN_IN_FORM = {
  type: 'object',
  description:
    'The password step (`username`, `password`) or, for an account with two-factor authentication on, the code step (`challenge` from the page the password step answered, and `code`).',
  required: ['return_to'],
  example: {
    username: 'alice',
    password: 'correct-horse-battery',
    return_to: '/v{version}/oauth/authorize?response_type=code&client_id=oc_5bG2f0hQ9yJ3kT8mW1xZ7a',
  },
  properties: {
    username: string('The account to sign in to.', 'alice', { maxLength: 32 }),
    password: { type: 'string', format: 'password', maxLength: 128, writeOnly: true, example: 'correct-horse-battery' },
    challenge: string('The code step: the challenge the password step put in its page.', 'cH4lL3ng3_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7', { maxLength: 64 }),
    code: string('The code step: a current 6-digit code of the authenticator app, or a recovery code.', '492039', { maxLength: 11 }),
    return_to: string(
      'The authorization request to come back to: a path starting with /v{version}/oauth/authorize? (or the same under another version prefix).',
      '/v{version}/oauth/authorize?response_type=code&client_id=oc_5bG2f0hQ9yJ3kT8mW1xZ7a&…',
      { pattern: AUTHORIZE_RETURN_PATTERN.source },
    ),
  },
};
