import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AuthService } from '../auth/auth.service.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { Public } from '../common/caller/public.decorator.js';
import { RateLimit } from '../auth/rate-limits.js';
import { SESSION_COOKIE, SessionsService } from '../auth/sessions.service.js';
import { startSession } from '../auth/sessions.controller.js';
import { TOTP_SETUP_REQUIRED } from '../auth/guards/authentication.guard.js';
import { ProtocolOperation } from '../common/decorators/operation.decorators.js';
import { ApiException } from '../common/errors/api-exception.js';
import { FormBody } from '../common/middleware/form-body.js';
import { registeredText } from '../common/resources/resource-registry.js';
import type { Env } from '../config/env.validation.js';
import { UsersService } from '../users/users.service.js';
import { AUTHORIZE_RETURN_PATTERN, OAUTH_PATHS } from './oauth-paths.js';
import { OAuthTokenResponse } from './oauth-protocol.response.js';
import {
  ApiAuthorizeBadRequest,
  ApiFormBody,
  ApiHtmlResponse,
  ApiOAuthErrors,
  ApiRedirectResponse,
  CONSENT_FORM,
  REVOKE_FORM,
  SIGN_IN_FORM,
  TOKEN_FORM,
} from './oauth.openapi.js';
import { AUTHORIZE_PARAMS, type AuthorizeParams, OAuthService, type ProtocolAnswer, sameToken } from './oauth.service.js';
import { consentPage, errorPage, PAGE_HEADERS, signInPage, totpCodePage } from './pages.js';

/** Sends an HTML page with the no-cache, no-frame headers and no CORS headers. */
function sendPage(res: Response, status: number, html: string, headers: Record<string, string> = {}): void {
  withoutCors(res);
  res.status(status);
  for (const [name, value] of Object.entries({ ...PAGE_HEADERS, ...headers })) res.setHeader(name, value);
  res.send(html);
}

/** A redirect without a body (the document says so), never cached. */
function sendRedirect(res: Response, status: 302 | 303, location: string): void {
  withoutCors(res);
  res.status(status);
  res.setHeader('Location', location);
  res.setHeader('Cache-Control', 'no-store');
  res.end();
}

/** Writes a protocol answer (token, revocation) as JSON. */
function sendAnswer(res: Response, answer: ProtocolAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if (answer.body) res.json(answer.body);
  else res.end();
}

/** The authorize and sign-in pages never carry CORS headers, whatever a global CORS layer added. */
function withoutCors(res: Response): void {
  for (const name of res.getHeaderNames()) if (name.startsWith('access-control-')) res.removeHeader(name);
}

const SCOPE_EXAMPLE = 'todos:read todos:write';

/**
 * The OAuth 2.0 protocol endpoints, all public: the authorize endpoint with its sign-in
 * and consent pages (HTML, session cookie, CSRF token), the token endpoint and revocation
 * (`application/x-www-form-urlencoded`, RFC 6749 §5.2 error bodies).
 */
@ApiTags('oauth')
@ApiExtraModels(OAuthTokenResponse)
@Controller('oauth')
export class OAuthController {
  private readonly secureCookie: boolean;

  constructor(
    private readonly oauth: OAuthService,
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
    private readonly users: UsersService,
    config: ConfigService<Env, true>,
  ) {
    this.secureCookie = config.get('NODE_ENV', { infer: true }) === 'production';
  }

  /**
   * Start an authorization (RFC 6749 §4.1.1, PKCE S256 required)
   *
   * Unknown client or redirect URI not registered (exact match): 400 error page, no redirect.
   * Other problems go back to the redirect URI as `error`. Without a session cookie: a sign-in
   * form that comes back here; with one: the consent page naming the client and each scope.
   */
  @Public()
  @Get('authorize')
  @ProtocolOperation()
  @ApiOperation({ operationId: 'authorize', summary: 'OAuth authorization endpoint: sign-in and consent pages' })
  @ApiQuery({ name: 'response_type', required: true, description: 'Always `code`.', schema: { type: 'string', enum: ['code'], example: 'code' } })
  @ApiQuery({
    name: 'client_id',
    required: true,
    description: 'The registered client.',
    schema: { type: 'string', maxLength: 64, example: 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a' },
  })
  @ApiQuery({
    name: 'redirect_uri',
    required: true,
    description: 'One of the client’s redirect URIs, character for character.',
    schema: { type: 'string', format: 'uri', maxLength: 2000, example: 'https://todo-sync.example/callback' },
  })
  @ApiQuery({
    name: 'scope',
    required: true,
    description: `Space-separated, within the client's scopes: ${registeredText('scopes', ', ')}.`,
    schema: { type: 'string', maxLength: 512, example: SCOPE_EXAMPLE },
  })
  @ApiQuery({
    name: 'state',
    required: false,
    description: 'Opaque value returned unchanged (1-512 printable ASCII characters).',
    schema: { type: 'string', maxLength: 512, example: 'af0ifjsldkj' },
  })
  @ApiQuery({
    name: 'code_challenge',
    required: true,
    description: 'PKCE: BASE64URL(SHA-256(code_verifier)).',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', maxLength: 43, example: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' },
  })
  @ApiQuery({
    name: 'code_challenge_method',
    required: true,
    description: 'Only `S256` (`plain` is refused).',
    schema: { type: 'string', enum: ['S256'], example: 'S256' },
  })
  @ApiHtmlResponse(200, 'The sign-in form (no session cookie) or the consent page (signed in).')
  @ApiRedirectResponse(
    302,
    'A problem after the client and redirect URI were recognised: back to the redirect URI with `error`, `error_description`, `state` and `iss`.',
  )
  @ApiAuthorizeBadRequest()
  async authorize(@Req() req: Request, @Res() res: Response): Promise<void> {
    const issuer = this.oauth.issuer(req);
    const check = await this.oauth.checkAuthorization(req.query as Record<string, unknown>, issuer);
    if (check.kind === 'invalid') return sendPage(res, 400, errorPage('Invalid authorization request', check.message));
    if (check.kind === 'redirect') return sendRedirect(res, 302, check.location);
    const user = await this.sessionUser(req);
    if (!user)
      return sendPage(res, 200, signInPage({ action: OAUTH_PATHS.signIn, returnTo: canonicalAuthorizeUrl(req.originalUrl), clientName: check.client.name }));
    const me = await this.users.profile(user.id);
    return sendPage(
      res,
      200,
      consentPage({
        action: OAUTH_PATHS.authorize,
        clientName: check.client.name,
        username: me.username,
        scopes: check.scopes,
        describeScope: (scope) => this.oauth.describeScope(scope),
        params: check.params,
        csrfToken: user.csrfToken ?? '',
      }),
    );
  }

  /**
   * Approve or deny on the consent page
   *
   * Needs the session cookie and its CSRF token (else 401 / 403). The request is checked again;
   * Approve → back to the redirect URI with `code`, `state` and `iss`; Deny → `error=access_denied`.
   */
  @Public()
  @Post('authorize')
  @FormBody()
  @ApiOperation({ operationId: 'decideAuthorization', summary: 'OAuth consent decision (form post of the consent page)' })
  @ApiFormBody('OAuthConsentForm', CONSENT_FORM)
  @ApiRedirectResponse(302, 'Back to the client: `code` (approved), or `error=access_denied` (denied), with `state` and `iss`.')
  @ApiAuthorizeBadRequest()
  @ApiHtmlResponse(401, 'No valid session cookie: sign in again.', { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } })
  @ApiHtmlResponse(403, 'The CSRF token is missing or wrong.')
  async decide(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const issuer = this.oauth.issuer(req);
    const check = await this.oauth.checkAuthorization(body, issuer);
    if (check.kind === 'invalid') return sendPage(res, 400, errorPage('Invalid authorization request', check.message));
    const user = await this.sessionUser(req);
    if (!user) {
      const again = `${OAUTH_PATHS.authorize}?${new URLSearchParams(Object.entries(pick(body)) as [string, string][]).toString()}`;
      return sendPage(res, 401, errorPage('Sign in again', 'Your session has ended.', { href: again, text: 'Sign in and try again' }), {
        'WWW-Authenticate': 'Bearer realm="api"',
      });
    }
    if (!sameToken(body.csrf_token, user.csrfToken))
      return sendPage(res, 403, errorPage('Request refused', 'The form’s CSRF token is missing or wrong; reload the consent page.'));
    if (check.kind === 'redirect') return sendRedirect(res, 302, check.location);
    if (body.decision !== 'approve' && body.decision !== 'deny') return sendPage(res, 400, errorPage('Invalid decision', 'decision must be approve or deny'));
    const checked = Array.isArray(body.grant_scope) ? body.grant_scope.map(String) : typeof body.grant_scope === 'string' ? [body.grant_scope] : [];
    return sendRedirect(res, 302, await this.oauth.decide(check, user, body.decision === 'approve', checked, issuer));
  }

  /**
   * Sign in from the authorize endpoint's form
   *
   * Starts a cookie session (as `POST /v1/sessions`, same throttling) and goes back to the
   * authorization request. Refused from another origin (login CSRF). For an account with
   * two-factor authentication on, the password step answers a code page, whose post (`challenge`,
   * `code`) completes the sign-in.
   */
  @Public()
  @RateLimit('sign_in')
  @Post('sign-in')
  @FormBody()
  @ApiOperation({ operationId: 'oauthSignIn', summary: 'OAuth sign-in form post: start a session and return to the authorization request' })
  @ApiFormBody('OAuthSignInForm', SIGN_IN_FORM)
  @ApiResponse({
    status: 303,
    description: 'Signed in (`Set-Cookie: sid=…`); back to the authorization request.',
    headers: {
      Location: {
        required: true,
        description: 'The authorization request (`return_to`).',
        schema: {
          type: 'string',
          format: 'uri-reference',
          maxLength: 4096,
          example: '/v{version}/oauth/authorize?response_type=code&client_id=oc_5bG2f0hQ9yJ3kT8mW1xZ7a',
        },
      },
      'Set-Cookie': {
        description: 'The session cookie, as from POST /v{version}/sessions.',
        schema: { type: 'string', maxLength: 512, example: 'sid=Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s; Max-Age=43200; Path=/; HttpOnly; SameSite=Lax' },
      },
    },
  })
  @ApiHtmlResponse(200, 'The password is right and the account has two-factor authentication on: the code page, which posts `challenge` and `code` here.')
  @ApiAuthorizeBadRequest()
  @ApiHtmlResponse(401, 'Wrong username or password, or a wrong code: the form again, with the message.', {
    'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' },
  })
  @ApiHtmlResponse(
    403,
    'Posted from another origin; or, with REQUIRE_VERIFIED_EMAIL, the account has no verified e-mail address (docs/authentication.md#e-mail-verification); or, with REQUIRE_ADMIN_TOTP, an admin without two-factor authentication.',
  )
  @ApiHtmlResponse(429, 'Too many failed sign-ins (this HTML page), or over the sign-in rate limit (`ErrorResp`, docs/limits.md#rates).', {
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  })
  async signIn(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.oauth.issuer(req) && origin !== `${req.protocol}://${req.get('host')}`) {
      return sendPage(res, 403, errorPage('Request refused', 'The sign-in form was posted from another site.'));
    }
    const { username, password, return_to: returnTo } = body;
    if (typeof returnTo !== 'string' || !AUTHORIZE_RETURN_PATTERN.test(returnTo) || /[\s\\]/.test(returnTo)) {
      return sendPage(res, 400, errorPage('Invalid sign-in request', 'return_to must be an authorization request of this server'));
    }
    if (body.challenge !== undefined) return this.codeStep(body, returnTo, req, res);
    if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) {
      return sendPage(res, 400, signInPage({ action: OAUTH_PATHS.signIn, returnTo, error: 'Enter your username and password.' }));
    }
    let step;
    try {
      step = await this.auth.passwordStep(username, password, req.ip ?? '', 'session');
    } catch (error) {
      if (error instanceof ApiException && error.getStatus() === 401) {
        return sendPage(res, 401, signInPage({ action: OAUTH_PATHS.signIn, returnTo, username, error: 'Invalid username or password.' }), {
          'WWW-Authenticate': 'Bearer realm="api"',
        });
      }
      if (error instanceof ApiException && error.getStatus() === 429) {
        return sendPage(res, 429, errorPage('Too many attempts', error.message), error.headers ?? {});
      }
      if (error instanceof ApiException && error.getStatus() === 403) {
        // REQUIRE_VERIFIED_EMAIL: the right password of an account without a verified address
        return sendPage(res, 403, errorPage('Verify your e-mail address', error.message));
      }
      throw error;
    }
    if (step.challenge) return sendPage(res, 200, totpCodePage({ action: OAUTH_PATHS.signIn, returnTo, challenge: step.challenge.challenge }));
    if (step.user.totpSetup) {
      // REQUIRE_ADMIN_TOTP: an admin without two-factor authentication cannot authorize clients
      return sendPage(res, 403, errorPage('Two-factor authentication required', TOTP_SETUP_REQUIRED));
    }
    await startSession(this.sessions, step.user, req, res, this.secureCookie);
    return sendRedirect(res, 303, returnTo);
  }

  /**
   * The sign-in form's code step (docs/authentication.md#two-factor-authentication-totp): the
   * password step's challenge with a code or a recovery code; a session and back to `returnTo`,
   * or the code page again with the message (401), or the sign-in form when the challenge is gone.
   */
  private async codeStep(body: Record<string, unknown>, returnTo: string, req: Request, res: Response): Promise<void> {
    const { challenge, code } = body;
    if (typeof challenge !== 'string' || !challenge || challenge.length > 64) {
      return sendPage(res, 400, errorPage('Invalid sign-in request', 'challenge must be the one of the code page'));
    }
    const entered = typeof code === 'string' ? code.trim() : '';
    if (!/^[0-9]{6}$/.test(entered) && !/^[A-Za-z2-7]{5}-?[A-Za-z2-7]{5}$/.test(entered)) {
      return sendPage(res, 400, totpCodePage({ action: OAUTH_PATHS.signIn, returnTo, challenge, error: 'Enter the 6-digit code or a recovery code.' }));
    }
    let done;
    try {
      done = await this.auth.completeChallenge(challenge, /^[0-9]{6}$/.test(entered) ? { code: entered } : { recovery_code: entered });
    } catch (error) {
      if (error instanceof ApiException && error.getStatus() === 401) {
        const expired = error.message.startsWith('sign-in challenge');
        const page = expired
          ? signInPage({ action: OAUTH_PATHS.signIn, returnTo, error: 'The sign-in took too long; sign in again.' })
          : totpCodePage({ action: OAUTH_PATHS.signIn, returnTo, challenge, error: 'Invalid or already used code.' });
        return sendPage(res, 401, page, { 'WWW-Authenticate': 'Bearer realm="api"' });
      }
      if (error instanceof ApiException && error.getStatus() === 429) {
        return sendPage(res, 429, errorPage('Too many attempts', error.message), error.headers ?? {});
      }
      throw error;
    }
    await startSession(this.sessions, done.user, req, res, this.secureCookie);
    return sendRedirect(res, 303, returnTo);
  }

  /**
   * Exchange a code or a refresh token for tokens (RFC 6749 §4.1.3, §6)
   *
   * `application/x-www-form-urlencoded`. Confidential clients authenticate with
   * client_secret_basic or client_secret_post, public clients send `client_id` only. The code
   * needs its PKCE `code_verifier`; each refresh token works once (a reused one revokes the grant).
   */
  @Public()
  @Post('token')
  @FormBody()
  @HttpCode(200)
  @ApiOperation({ operationId: 'issueToken', summary: 'OAuth token endpoint (authorization_code with PKCE, refresh_token)' })
  @ApiFormBody('OAuthTokenForm', TOKEN_FORM)
  @ApiOkResponse({
    type: OAuthTokenResponse,
    description: 'New tokens (RFC 6749 §5.1).',
    headers: {
      'Cache-Control': { required: true, description: 'Always `no-store`.', schema: { type: 'string', enum: ['no-store'], example: 'no-store' } },
      Pragma: { description: 'Always `no-cache`.', schema: { type: 'string', enum: ['no-cache'], example: 'no-cache' } },
    },
  })
  @ApiOAuthErrors()
  async token(@Req() req: Request, @Res() res: Response): Promise<void> {
    sendAnswer(res, await this.oauth.token(req));
  }

  /**
   * Revoke a token (RFC 7009)
   *
   * A refresh token revokes its whole grant (every token issued from it); an access token is
   * refused from now on. Unknown tokens and other clients' tokens: 200 too, nothing happens.
   */
  @Public()
  @Post('revoke')
  @FormBody()
  @HttpCode(200)
  @ApiOperation({ operationId: 'revokeToken', summary: 'OAuth token revocation (RFC 7009)' })
  @ApiFormBody('OAuthRevokeForm', REVOKE_FORM)
  @ApiResponse({ status: 200, description: 'Revoked, or nothing to revoke (RFC 7009 §2.2). No body.' })
  @ApiOAuthErrors()
  async revoke(@Req() req: Request, @Res() res: Response): Promise<void> {
    sendAnswer(res, await this.oauth.revoke(req));
  }

  /** The caller of the request's session cookie; null without one, and for a session limited to enrolling in two-factor authentication (REQUIRE_ADMIN_TOTP). */
  private async sessionUser(req: Request): Promise<AuthUser | null> {
    const sid = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
    const user = sid ? await this.sessions.authenticate(sid) : null;
    return user?.totpSetup ? null : user;
  }
}

/** The authorization-request parameters of a form body (strings only). */
function pick(body: Record<string, unknown>): AuthorizeParams {
  return Object.fromEntries(AUTHORIZE_PARAMS.filter((name) => typeof body[name] === 'string').map((name) => [name, body[name] as string]));
}

/**
 * The authorization request as the sign-in form comes back to it: the canonical
 * `/v1/oauth/authorize` path with the request's own query, whichever version prefix (`/v2/…`) it
 * was served under, so `return_to` has one accepted form.
 */
function canonicalAuthorizeUrl(originalUrl: string): string {
  const query = originalUrl.indexOf('?');
  return OAUTH_PATHS.authorize + (query >= 0 ? originalUrl.slice(query) : '');
}
