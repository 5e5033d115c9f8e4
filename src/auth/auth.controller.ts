import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiCredentials, ApiEmailUnverified, ClientOf, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
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
   * get the same 401.
   */
  @Public()
  @RateLimit('sign_in')
  @Post('login')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'login', summary: 'Log in with username and password' })
  @ApiOkResponse({ type: TokenResponse, description: 'A new token pair.' })
  @ApiErrors(400, 401, 413, 415, 422, 429)
  @ApiEmailUnverified()
  login(@Body() body: LoginDto, @ClientOf() client: LoginClient): Promise<TokenResponse> {
    return this.auth.login(body.username, body.password, client);
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
  @Post('logout')
  @HttpCode(204)
  @ApiOperation({ operationId: 'logout', summary: 'Log out: revoke this login and its access token' })
  @ApiNoContentResponse({ description: 'Logged out.' })
  @ApiErrors(400, 401)
  async logout(@CurrentUser() caller: AuthUser): Promise<void> {
    await this.auth.logout(caller);
  }
}
