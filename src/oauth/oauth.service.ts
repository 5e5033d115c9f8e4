import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { Request } from 'express';
import { Repository } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { TokenDenyList } from '../auth/deny-list.js';
import { sha256 } from '../auth/hashing.js';
import { JwtKeys } from '../auth/jwt-keys.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../common/resources/resource-registry.js';
import type { Env } from '../config/env.validation.js';
import { OAuthClientsService } from './oauth-clients.service.js';
import { OAuthGrant } from './oauth-grant.entity.js';
import { OAuthGrantsService } from './oauth-grants.service.js';
import { GRANT_TYPES, type ModelClient, OAuthModel, toModelClient } from './oauth.model.js';
import type { OAuthServerMetadataResponse } from './oauth-protocol.response.js';
import { OAuthRefreshToken } from './oauth-refresh-token.entity.js';

/** Lifetime of an authorization code in seconds (RFC 9700 §4.2.1 recommends short-lived codes; at most 60 s). */
export const AUTHORIZATION_CODE_TTL = 60;

/** The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3), carried through the consent form. */
export const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;
export type AuthorizeParams = Partial<Record<(typeof AUTHORIZE_PARAMS)[number], string>>;

/** Outcome of checking an authorization request. */
export type AuthorizationCheck =
  /** Unknown client or bad redirect URI: show an error page, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'invalid'; message: string }
  /** Anything else wrong: the error goes back to the client's redirect URI. */
  | { kind: 'redirect'; location: string }
  | { kind: 'valid'; client: ModelClient; params: AuthorizeParams; scopes: string[] };

/** An answer of a protocol endpoint: status, JSON body (none for 200 revocation) and headers. */
export interface ProtocolAnswer {
  status: number;
  body?: Record<string, unknown>;
  headers: Record<string, string>;
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 6749 Appendix A.5: state is VSCHAR (printable ASCII). */
const STATE = /^[\x20-\x7e]{1,512}$/;

/**
 * The OAuth 2.0 authorization server around @node-oauth/oauth2-server: checks an
 * authorization request before the consent page, turns the user's decision into a redirect with
 * `code`, `state` and `iss` (RFC 9207), runs the token endpoint (authorization_code with PKCE S256,
 * refresh_token; RFC 6749 §5 bodies), revocation (RFC 7009) and the metadata (RFC 8414).
 */
@Injectable()
export class OAuthService {
  private readonly logger = new Logger('OAuth');
  private readonly server: OAuth2Server;
  private readonly configuredIssuer?: string;

  constructor(
    private readonly model: OAuthModel,
    private readonly clients: OAuthClientsService,
    private readonly grants: OAuthGrantsService,
    @InjectRepository(OAuthRefreshToken) private readonly tokens: Repository<OAuthRefreshToken>,
    @InjectRepository(OAuthGrant) private readonly grantRows: Repository<OAuthGrant>,
    private readonly denyList: TokenDenyList,
    private readonly jwt: JwtService,
    private readonly keys: JwtKeys,
    config: ConfigService<Env, true>,
    @Inject(RESOURCE_REGISTRY) private readonly registry: ResourceRegistry,
  ) {
    this.configuredIssuer = config.get('OAUTH_ISSUER', { infer: true });
    this.server = new OAuth2Server({
      model: model.forToken(),
      accessTokenLifetime: config.get('ACCESS_TOKEN_TTL', { infer: true }),
      refreshTokenLifetime: config.get('REFRESH_TOKEN_TTL', { infer: true }),
      authorizationCodeLifetime: AUTHORIZATION_CODE_TTL,
      allowEmptyState: true,
      allowBearerTokensInQueryString: false,
      alwaysIssueNewRefreshToken: true,
      // public clients authenticate with PKCE / their client_id alone; OAuthClientsService.authenticate
      // still demands the secret of confidential clients
      requireClientAuthentication: { authorization_code: false, refresh_token: false },
    });
  }

  /** True when the issuer is OAUTH_ISSUER (stable, cacheable) rather than derived from the request. */
  get issuerConfigured(): boolean {
    return this.configuredIssuer !== undefined;
  }

  /** The issuer identifier (RFC 8414 §2): OAUTH_ISSUER, else the request's own origin. */
  issuer(req: Request): string {
    if (this.configuredIssuer) return this.configuredIssuer;
    const host = req.get('host') ?? '';
    return `${req.protocol}://${/^[A-Za-z0-9.:[\]-]{1,255}$/.test(host) ? host : 'localhost'}`;
  }

  /** What `scope` lets a client do, in words for the consent page ("read todos"). */
  describeScope(scope: string): string {
    return this.registry.describeScope(scope);
  }

  /** The RFC 8414 metadata for `issuer`; `jwks_uri` only when tokens are RS256. */
  metadata(issuer: string): OAuthServerMetadataResponse {
    const methods = ['client_secret_basic', 'client_secret_post', 'none'];
    return {
      issuer,
      authorization_endpoint: `${issuer}/v1/oauth/authorize`,
      token_endpoint: `${issuer}/v1/oauth/token`,
      revocation_endpoint: `${issuer}/v1/oauth/revoke`,
      ...(this.keys.algorithm === 'RS256' ? { jwks_uri: `${issuer}/.well-known/jwks.json` } : {}),
      scopes_supported: [...this.registry.scopes],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [...GRANT_TYPES],
      token_endpoint_auth_methods_supported: methods,
      revocation_endpoint_auth_methods_supported: methods,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${issuer}/docs`,
    };
  }

  /**
   * Checks an authorization request (query of GET or body of the consent POST): client and exact
   * redirect URI first (failures are never redirected), then `response_type=code`, PKCE S256,
   * `state`, and scopes within the client's registration (failures go back to the client).
   */
  async checkAuthorization(source: Record<string, unknown>, issuer: string): Promise<AuthorizationCheck> {
    const params: AuthorizeParams = {};
    const repeated: string[] = [];
    for (const name of AUTHORIZE_PARAMS) {
      const value = source[name];
      if (Array.isArray(value)) repeated.push(name);
      else if (typeof value === 'string' && value !== '') params[name] = value;
    }
    if (repeated.includes('client_id') || repeated.includes('redirect_uri'))
      return { kind: 'invalid', message: 'client_id and redirect_uri must be sent once' };
    if (!params.client_id) return { kind: 'invalid', message: 'client_id is missing' };
    const client = toModelClient(await this.clients.findByClientId(params.client_id));
    if (!client) return { kind: 'invalid', message: 'unknown client_id' };
    if (!params.redirect_uri) return { kind: 'invalid', message: 'redirect_uri is missing' };
    if (!client.redirectUris.includes(params.redirect_uri))
      return { kind: 'invalid', message: 'redirect_uri is not registered for this client (it must match exactly)' };

    const state = repeated.includes('state') || (params.state !== undefined && !STATE.test(params.state)) ? undefined : params.state;
    const fail = (error: string, description: string): AuthorizationCheck => ({
      kind: 'redirect',
      location: this.redirectTo(params.redirect_uri as string, { error, error_description: description, state }, issuer),
    });
    if (repeated.length > 0) return fail('invalid_request', `parameters sent more than once: ${repeated.join(', ')}`);
    if (params.state !== undefined && state === undefined) return fail('invalid_request', 'state must be 1-512 printable ASCII characters');
    if (!params.response_type) return fail('invalid_request', 'response_type is missing');
    if (params.response_type !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');
    if (!params.code_challenge) return fail('invalid_request', 'code_challenge is required (PKCE with S256)');
    if (params.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!S256_CHALLENGE.test(params.code_challenge))
      return fail('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the code verifier');
    const requested = (params.scope ?? '').split(' ').filter(Boolean);
    if (requested.length === 0) return fail('invalid_scope', 'scope is missing');
    const scopes = await this.model.validateScope(client, requested);
    if (!scopes) return fail('invalid_scope', `scope must be a subset of the client's scopes: ${client.scopes.join(' ')}`);
    return { kind: 'valid', client, params, scopes };
  }

  /**
   * The user's decision on the consent page: deny, or approve the checked scopes (a subset of the
   * requested ones; none checked counts as a denial). Approval issues a code through the library
   * (stored hashed with the PKCE challenge, single use, 60 s). Returns the redirect location with
   * `code` or `error`, `state` unchanged and `iss`.
   */
  async decide(check: Extract<AuthorizationCheck, { kind: 'valid' }>, user: AuthUser, approve: boolean, checked: string[], issuer: string): Promise<string> {
    const { params } = check;
    const redirectUri = params.redirect_uri as string;
    const approved = check.scopes.filter((scope) => checked.includes(scope));
    if (!approve || approved.length === 0) {
      return this.redirectTo(
        redirectUri,
        { error: 'access_denied', error_description: approve ? 'no scope was approved' : 'the user denied access', state: params.state },
        issuer,
      );
    }
    const request = new OAuth2Server.Request({ method: 'POST', headers: {}, query: {}, body: { ...params, scope: approved.join(' ') } });
    try {
      const code = await this.server.authorize(request, new OAuth2Server.Response(), {
        model: this.model.forAuthorize(),
        authenticateHandler: { handle: async () => ({ id: user.id, role: user.role }) },
      } as OAuth2Server.AuthorizeOptions);
      return this.redirectTo(redirectUri, { code: code.authorizationCode, state: params.state }, issuer);
    } catch (error) {
      if (!(error instanceof OAuth2Server.OAuthError) || error.code >= 500) throw error;
      return this.redirectTo(redirectUri, { error: error.name, error_description: error.message, state: params.state }, issuer);
    }
  }

  /**
   * The token endpoint (RFC 6749 §4.1.3, §6): form parameters in `body`, client credentials in
   * `Authorization: Basic` or the body. Success: 200 `{access_token, token_type, expires_in,
   * refresh_token, scope}`; errors: RFC 6749 §5.2 `{error, error_description}` — 400, or 401 with
   * `WWW-Authenticate: Basic` for `invalid_client`. Always `Cache-Control: no-store`.
   */
  async token(req: Request): Promise<ProtocolAnswer> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const problem = repeatedParameter(body);
    if (problem) return oauthError(400, 'invalid_request', problem);
    const grantType = body.grant_type;
    if (typeof grantType !== 'string' || grantType === '') return oauthError(400, 'invalid_request', 'grant_type is missing');
    if (!GRANT_TYPES.includes(grantType)) return oauthError(400, 'unsupported_grant_type', `grant_type must be ${GRANT_TYPES.join(' or ')}`);
    if (grantType === 'authorization_code' && typeof body.code_verifier !== 'string')
      return oauthError(400, 'invalid_request', 'code_verifier is required (PKCE)');
    const headers = { ...(req.headers as Record<string, string>) };
    if (headers.authorization) headers.authorization = normalizeBasic(headers.authorization);
    const request = new OAuth2Server.Request({ method: 'POST', headers, query: {}, body });
    const response = new OAuth2Server.Response();
    try {
      await this.server.token(request, response);
      return { status: 200, body: response.body as Record<string, unknown>, headers: { ...NO_STORE } };
    } catch (error) {
      return this.protocolError(error);
    }
  }

  /**
   * Token revocation (RFC 7009): the client authenticates as at the token endpoint; a refresh
   * token of this client revokes its whole grant, an access token of this client is denied until
   * it expires. Unknown tokens and other clients' tokens are ignored: 200 either way.
   * @returns 200 (no body); 400 `invalid_request` without `token`; 401 `invalid_client`.
   */
  async revoke(req: Request): Promise<ProtocolAnswer> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const problem = repeatedParameter(body);
    if (problem) return oauthError(400, 'invalid_request', problem);
    const credentials = clientCredentials(req.headers.authorization, body);
    if ('error' in credentials) return oauthError(credentials.status, credentials.error, credentials.description);
    const client = await this.clients.authenticate(credentials.clientId, credentials.clientSecret);
    if (!client) return oauthError(401, 'invalid_client', 'client authentication failed');
    const token = body.token;
    if (typeof token !== 'string' || token === '') return oauthError(400, 'invalid_request', 'token is missing');
    if (token.split('.').length === 3) {
      const payload = await this.jwt.verifyAsync<{ jti?: unknown; exp?: unknown; client_id?: unknown }>(token, this.keys.verifyOptions).catch(() => null);
      if (payload && payload.client_id === client.client_id && typeof payload.jti === 'string' && typeof payload.exp === 'number') {
        await this.denyList.deny(payload.jti, payload.exp);
      }
    } else {
      const row = await this.tokens.findOne({ where: { token_hash: sha256(token) } });
      const grant = row ? await this.grantRows.findOne({ where: { id: row.grant_id } }) : null;
      if (grant && grant.oauth_client_id === client.id) await this.grants.revoke(grant.id);
    }
    return { status: 200, headers: { ...NO_STORE } };
  }

  private protocolError(error: unknown): ProtocolAnswer {
    if (error instanceof OAuth2Server.OAuthError && error.code < 500) {
      if (error.name === 'invalid_client') return oauthError(401, 'invalid_client', error.message);
      return oauthError(400, error.name, error.message);
    }
    this.logger.error({ err: error }, 'token endpoint failed');
    return oauthError(500, 'server_error', 'internal server error');
  }

  /** `redirectUri` with the response parameters and `iss` appended to its query (RFC 6749 §4.1.2, RFC 9207). */
  private redirectTo(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...params, iss: issuer })) if (value !== undefined) query.set(name, value);
    return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${query.toString()}`;
  }
}

/** An RFC 6749 §5.2 error answer; `invalid_client` as 401 with the Basic challenge. */
export function oauthError(status: number, error: string, description: string): ProtocolAnswer {
  const headers: Record<string, string> = { ...NO_STORE };
  if (status === 401) headers['WWW-Authenticate'] = 'Basic realm="oauth"';
  return { status, body: { error, error_description: description }, headers };
}

/** RFC 6749 §3.2: parameters must not be sent more than once. Returns the problem or null. */
function repeatedParameter(body: Record<string, unknown>): string | null {
  const repeated = Object.entries(body)
    .filter(([, value]) => typeof value !== 'string')
    .map(([name]) => name);
  return repeated.length ? `parameters must be sent once: ${repeated.join(', ')}` : null;
}

/**
 * Client credentials of a revocation request (RFC 6749 §2.3.1): `Authorization: Basic` with the
 * form-encoded id and secret, or `client_id` (+ `client_secret`) in the body — not both.
 */
export function clientCredentials(
  authorization: string | undefined,
  body: Record<string, unknown>,
): { clientId: string; clientSecret?: string } | { status: number; error: string; description: string } {
  const basic = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (basic) {
    if (body.client_secret !== undefined) return { status: 400, error: 'invalid_request', description: 'use one client authentication method, not two' };
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    try {
      const formDecode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
      if (colon > 0) return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
    } catch {
      // malformed percent-encoding: fall through to invalid_client
    }
    return { status: 401, error: 'invalid_client', description: 'malformed Basic credentials' };
  }
  if (typeof body.client_id !== 'string' || body.client_id === '')
    return { status: 401, error: 'invalid_client', description: 'client authentication is missing' };
  return { clientId: body.client_id, clientSecret: typeof body.client_secret === 'string' ? body.client_secret : undefined };
}

/**
 * RFC 6749 §2.3.1: client_secret_basic sends the client id and secret form-urlencoded before the
 * Base64 (openid-client encodes `_` as `%5F`); the library compares them undecoded, so the header is
 * handed to it decoded. Anything that is not well-formed Basic is passed on unchanged (→ invalid_client).
 */
export function normalizeBasic(authorization: string): string {
  const credentials = clientCredentials(authorization, {});
  if (!/^basic\s/i.test(authorization) || !('clientId' in credentials)) return authorization;
  return `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret ?? ''}`).toString('base64')}`;
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function sameToken(sent: unknown, expected: string | undefined): boolean {
  if (typeof sent !== 'string' || !expected) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
