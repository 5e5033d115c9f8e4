import { Body, Controller, Delete, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiCookieAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import type { Env } from '../config/env.validation.js';
import { AuthService } from './auth.service.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ApiEmailUnverified, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { Public } from '../common/caller/public.decorator.js';
import { LoginDto } from './dto/login.dto.js';
import { SessionResponse } from './dto/session.response.js';
import { RateLimit } from './rate-limits.js';
import { SESSION_COOKIE, type SessionView, SessionsService } from './sessions.service.js';

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
   * Secure in production) with a new session id, and returns the CSRF token.
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
  @ApiErrors(400, 401, 413, 415, 422, 429)
  @ApiEmailUnverified()
  async create(@Body() body: LoginDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<SessionView> {
    const user = await this.auth.checkPassword(body.username, body.password, req.ip ?? '');
    const previous = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
    const { sid, view } = await this.sessions.create(user.id, previous, { address: req.ip ?? '', userAgent: req.get('user-agent') });
    res.cookie(SESSION_COOKIE, sid, { httpOnly: true, sameSite: 'lax', path: '/', secure: this.secure, maxAge: this.sessions.absoluteTtlMs });
    return view;
  }

  /** The current session (cookie). */
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
