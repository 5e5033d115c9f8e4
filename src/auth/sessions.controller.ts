import { Body, Controller, Delete, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiAcceptedResponse, ApiCookieAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import type { Env } from '../config/env.validation.js';
import { AuthService, type SignedIn } from './auth.service.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { AllowedDuringTotpSetup, ApiEmailUnverified, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { LoginChallengeResponse } from './dto/totp.dto.js';
import { Public } from '../common/caller/public.decorator.js';
import { LoginDto } from './dto/login.dto.js';
import { SessionResponse } from './dto/session.response.js';
import { RateLimit } from './rate-limits.js';
import { SESSION_COOKIE, type SessionView, SessionsService } from './sessions.service.js';

/**
 * Starts a session of `user` (signed in) for the request's client and sets its `sid` cookie
 * (HttpOnly, SameSite=Lax, Path=/, `secure` in production); a `sid` the client still sent is
 * ended. Returns the session view. @throws as SessionsService.create.
 */
export async function startSession(sessions: SessionsService, user: SignedIn, req: Request, res: Response, secure: boolean): Promise<SessionView> {
  const previous = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
  const { sid, view } = await sessions.create(user.id, previous, { address: req.ip ?? '', userAgent: req.get('user-agent') }, user.totpSetup === true);
  res.cookie(SESSION_COOKIE, sid, { httpOnly: true, sameSite: 'lax', path: '/', secure, maxAge: sessions.absoluteTtlMs });
  return view;
}

/** `/v1/sessions` (docs/authentication.md#session-cookies): cookie sign-in for browsers. */
@ApiTags('sessions')
@RequireScope(null)
@Controller('sessions')
export class SessionsController {
  private readonly secure: boolean;

  constructor(
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
    config: ConfigService<Env, true>,
  ) {
    this.secure = config.get('NODE_ENV', { infer: true }) === 'production';
  }

  /**
   * Sign in with username and password; sets the `sid` cookie (HttpOnly, SameSite=Lax, Path=/,
   * Secure in production) with a new session id, and returns the CSRF token. For an account with
   * two-factor authentication on: 202 with a challenge, no cookie yet (`POST /v1/login-challenges`
   * sets it).
   */
  @Public()
  @RateLimit('sign_in')
  @Post()
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Sign in: start a cookie session' })
  @ApiCreatedResponse({
    type: SessionResponse,
    description: 'Signed in; `Set-Cookie: sid=…`.',
    headers: {
      'Set-Cookie': {
        description: 'The session cookie: `sid=<id>; Path=/; HttpOnly; SameSite=Lax` (plus `Secure` in production), valid until the session ends.',
        schema: { type: 'string', maxLength: 512, example: 'sid=Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s; Max-Age=43200; Path=/; HttpOnly; SameSite=Lax' },
      },
    },
  })
  @ApiAcceptedResponse({
    type: LoginChallengeResponse,
    description:
      'The password is right and the account has two-factor authentication on: no cookie yet; send a code with the challenge to `POST /v{version}/login-challenges`.',
  })
  @ApiErrors(400, 401, 413, 415, 422, 429)
  @ApiEmailUnverified()
  async create(@Body() body: LoginDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<SessionView | LoginChallengeResponse> {
    const step = await this.auth.passwordStep(body.username, body.password, req.ip ?? '', 'session');
    if (step.challenge) {
      res.status(202);
      return step.challenge;
    }
    return startSession(this.sessions, step.user, req, res, this.secure);
  }

  /** The current session (cookie). */
  @AllowedDuringTotpSetup()
  @Get('current')
  @ApiCookieAuth('session')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'getCurrentSession', summary: 'Read the current session' })
  @ApiOkResponse({ type: SessionResponse })
  @ApiErrors(400, 401, 403)
  current(@CurrentUser() caller: AuthUser): Promise<SessionView> {
    return this.sessions.current(caller);
  }

  /** Sign out: destroys the server-side session and clears the cookie. Needs `X-CSRF-Token`. */
  @AllowedDuringTotpSetup()
  @Delete('current')
  @HttpCode(204)
  @ApiCookieAuth('session')
  @ApiOperation({ operationId: 'deleteCurrentSession', summary: 'Sign out: end the current session' })
  @ApiNoContentResponse({ description: 'Signed out; the cookie is cleared.' })
  @ApiErrors(400, 401, 403)
  async destroy(@CurrentUser() caller: AuthUser, @Res({ passthrough: true }) res: Response): Promise<void> {
    await this.sessions.destroy(caller);
    res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure: this.secure });
  }
}
