import { Body, Controller, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthUser } from '../common/caller/auth-user.js';
import { Public } from '../common/caller/public.decorator.js';
import { ErrorResp } from '../common/errors/error-resp.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import type { Env } from '../config/env.validation.js';
import { AuthService } from './auth.service.js';
import { AllowedDuringTotpSetup, ApiCredentials, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { SessionResponse } from './dto/session.response.js';
import { TokenResponse } from './dto/token.response.js';
import { CompleteLoginChallengeDto, ConfirmTotpDto, DeactivateTotpDto, TotpConfirmationResponse, TotpEnrolmentResponse } from './dto/totp.dto.js';
import { RateLimit } from './rate-limits.js';
import { type SessionView, SessionsService } from './sessions.service.js';
import { startSession } from './sessions.controller.js';
import { TotpService } from './totp.service.js';

/** The 409 of an enrolment or confirmation in the wrong state, as documented. */
const CONFLICT_EXAMPLE = { error: 'two-factor authentication is not on', code: 'conflict', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' };

/**
 * Two-factor authentication (docs/authentication.md#two-factor-authentication-totp):
 * `POST /v1/totp-enrolments`, `POST /v1/totp-confirmations`, `POST /v1/totp-deactivations` (the
 * signed-in user: bearer token or session, not API keys or OAuth tokens) and
 * `POST /v1/login-challenges` (public: the challenge of a password step is the authority).
 */
@ApiTags('auth')
@Controller()
export class TotpController {
  private readonly secure: boolean;

  constructor(
    private readonly totp: TotpService,
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
    config: ConfigService<Env, true>,
  ) {
    this.secure = config.get('NODE_ENV', { infer: true }) === 'production';
  }

  /**
   * Start enrolling in two-factor authentication
   *
   * A new TOTP secret, shown only in this answer (base32 and as an `otpauth://` URI for a QR code);
   * pending until confirmed with `POST /v1/totp-confirmations`. A new enrolment replaces a pending one.
   */
  @ApiCredentials()
  @RequireScope(null)
  @AllowedDuringTotpSetup()
  @Post('totp-enrolments')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'startTotpEnrolment', summary: 'Start enrolling in two-factor authentication (TOTP)' })
  @ApiOkResponse({ type: TotpEnrolmentResponse, description: 'The new secret, pending until confirmed; shown only here.' })
  @ApiResponse({
    status: 409,
    description: 'Two-factor authentication is on already: turn it off first.',
    type: ErrorResp,
    example: { ...CONFLICT_EXAMPLE, error: 'two-factor authentication is on already; turn it off first (POST /totp-deactivations)' },
  })
  @ApiErrors(400, 401, 403, 404)
  enrol(@CurrentUser() caller: AuthUser): Promise<TotpEnrolmentResponse> {
    return this.totp.enrol(caller.id);
  }

  /**
   * Confirm the enrolment with a current code
   *
   * Turns two-factor authentication on and returns ten single-use recovery codes, shown only here.
   * From now on every password sign-in needs a code too.
   */
  @ApiCredentials()
  @RequireScope(null)
  @AllowedDuringTotpSetup()
  @Post('totp-confirmations')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'confirmTotpEnrolment', summary: 'Turn two-factor authentication on with a current code' })
  @ApiOkResponse({ type: TotpConfirmationResponse, description: 'On; the recovery codes, shown only here.' })
  @ApiResponse({
    status: 409,
    description: 'No pending enrolment to confirm.',
    type: ErrorResp,
    example: { ...CONFLICT_EXAMPLE, error: 'no enrolment to confirm: start one with POST /totp-enrolments' },
  })
  @ApiErrors(400, 401, 403, 404, 413, 415, 422, 429)
  confirm(@CurrentUser() caller: AuthUser, @Body() body: ConfirmTotpDto): Promise<TotpConfirmationResponse> {
    return this.totp.confirm(caller.id, body.code);
  }

  /**
   * Turn two-factor authentication off
   *
   * Needs a current `code` or the account's `password` (one of them). The secret and the recovery
   * codes are deleted.
   */
  @ApiCredentials()
  @RequireScope(null)
  @Post('totp-deactivations')
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'deactivateTotp', summary: 'Turn two-factor authentication off with a code or the password' })
  @ApiNoContentResponse({ description: 'Off: password sign-in needs no code any more.' })
  @ApiResponse({ status: 409, description: 'Two-factor authentication is not on.', type: ErrorResp, example: CONFLICT_EXAMPLE })
  @ApiErrors(400, 401, 403, 413, 415, 422, 429)
  async deactivate(@CurrentUser() caller: AuthUser, @Body() body: DeactivateTotpDto): Promise<void> {
    await this.totp.deactivate(caller.id, body);
  }

  /**
   * Complete a sign-in with a two-factor code
   *
   * The second step of `POST /v1/login` or `POST /v1/sessions` for an account with two-factor
   * authentication on: the challenge of their 202 with a current `code` or a `recovery_code`.
   * Answers what the first step would have: a token pair (200) for `/login`, a session with its
   * cookie (201) for `/sessions`. The challenge works once, for its `expires_in` seconds.
   */
  @Public()
  @RateLimit('sign_in')
  @Post('login-challenges')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'completeLoginChallenge', summary: 'Complete a sign-in with a two-factor code or a recovery code' })
  @ApiOkResponse({ type: TokenResponse, description: 'The challenge came from `POST /v{version}/login`: a new token pair.' })
  @ApiCreatedResponse({
    type: SessionResponse,
    description: 'The challenge came from `POST /v{version}/sessions`: signed in, `Set-Cookie: sid=…`.',
    headers: {
      'Set-Cookie': {
        description: 'The session cookie, as from POST /v{version}/sessions.',
        schema: { type: 'string', maxLength: 512, example: 'sid=Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s; Max-Age=43200; Path=/; HttpOnly; SameSite=Lax' },
      },
    },
  })
  @ApiErrors(400, 401, 413, 415, 422, 429)
  async complete(
    @Body() body: CompleteLoginChallengeDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponse | SessionView> {
    const { kind, user } = await this.auth.completeChallenge(body.challenge, body);
    if (kind === 'token') {
      res.status(200);
      return this.auth.startTokenLogin(user, { address: req.ip ?? '', userAgent: req.get('user-agent') });
    }
    res.status(201);
    return startSession(this.sessions, user, req, res, this.secure);
  }
}
