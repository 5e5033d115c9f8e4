import { Body, Controller, Header, HttpCode, Post, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { AllowedDuringTotpSetup, ApiCredentials, ApiEmailUnverified, ClientOf, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { LoginChallengeResponse } from './dto/totp.dto.js';
import type { LoginClient } from './login-records.js';
import { Public } from '../common/caller/public.decorator.js';
import { LoginDto, RefreshDto } from './dto/login.dto.js';
import { TokenResponse } from './dto/token.response.js';
import { RateLimit } from './rate-limits.js';
import { AuthService } from './auth.service.js';

/** Token endpoints (docs/authentication.md#bearer-tokens-jwt): `POST /v1/login`, `POST /v1/refresh`, `POST /v1/logout`. */
@ApiTags('auth')
@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  /**
   * Log in with username and password
   *
   * Returns a short-lived access token and a refresh token. Wrong username and wrong password
   * get the same 401. For an account with two-factor authentication on, 202 with a challenge to
   * complete at `POST /v1/login-challenges` instead.
   */
  @Public()
  @RateLimit('sign_in')
  @Post('login')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'login', summary: 'Log in with username and password' })
  @ApiOkResponse({ type: TokenResponse, description: 'A new token pair.' })
  @ApiAcceptedResponse({
    type: LoginChallengeResponse,
    description:
      'The password is right and the account has two-factor authentication on: send a code with the challenge to `POST /v{version}/login-challenges`.',
  })
  @ApiErrors(400, 401, 413, 415, 422, 429)
  @ApiEmailUnverified()
  async login(
    @Body() body: LoginDto,
    @ClientOf() client: LoginClient,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponse | LoginChallengeResponse> {
    const answer = await this.auth.login(body.username, body.password, client);
    if ('challenge' in answer) res.status(202);
    return answer;
  }

  /**
   * Exchange a refresh token for a new pair
   *
   * The presented refresh token stops working (rotation); presenting it again revokes every token
   * of that login.
   */
  @Public()
  @Post('refresh')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'refreshToken', summary: 'Exchange a refresh token for a new token pair' })
  @ApiOkResponse({ type: TokenResponse, description: 'A new token pair; the presented refresh token is retired.' })
  @ApiErrors(400, 401, 413, 415, 422)
  refresh(@Body() body: RefreshDto): Promise<TokenResponse> {
    return this.auth.refresh(body.refresh_token);
  }

  /**
   * Log out
   *
   * Revokes every refresh token of this login and the access token itself (its `jti` is denied
   * until it expires).
   */
  @ApiCredentials()
  @RequireScope(null)
  @AllowedDuringTotpSetup()
  @Post('logout')
  @HttpCode(204)
  @ApiOperation({ operationId: 'logout', summary: 'Log out: revoke this login and its access token' })
  @ApiNoContentResponse({ description: 'Logged out.' })
  @ApiErrors(400, 401)
  async logout(@CurrentUser() caller: AuthUser): Promise<void> {
    await this.auth.logout(caller);
  }
}
