import { Body, Controller, Header, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/caller/public.decorator.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { PasswordResetRequestAccepted, RequestPasswordResetDto, ResetPasswordDto } from './dto/password-reset.dto.js';
import { PasswordResetsService } from './password-resets.service.js';

/** Password reset by mail (docs/authentication.md#password-reset): `POST /v1/password-reset-requests`, `POST /v1/password-resets`. Public. */
@ApiTags('auth')
@Controller()
export class PasswordResetsController {
  constructor(private readonly resets: PasswordResetsService) {}

  /**
   * Ask for a password-reset link by mail
   *
   * When an account has this e-mail address, a mail with a one-time link
   * (`<APP_URL>/reset-password#token=…`) is sent to it. The answer is the same whether or not an
   * account has the address.
   */
  @Public()
  @Post('password-reset-requests')
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'requestPasswordReset', summary: 'Ask for a password-reset link by mail' })
  @ApiAcceptedResponse({ type: PasswordResetRequestAccepted, description: 'Accepted: a mail goes out if an account has the address.' })
  @ApiErrors(400, 404, 413, 415, 422, 429)
  request(@Body() body: RequestPasswordResetDto, @Ip() address: string): Promise<PasswordResetRequestAccepted> {
    return this.resets.request(body.email, address);
  }

  /**
   * Set a new password with the mailed token
   *
   * The token works once and until it expires (PASSWORD_RESET_TTL). The reset ends every login of
   * the account: its access and refresh tokens, its sessions and its other reset links.
   */
  @Public()
  @Post('password-resets')
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'resetPassword', summary: 'Set a new password with the mailed token' })
  @ApiNoContentResponse({ description: 'The password is set; every earlier login of the account has ended.' })
  @ApiErrors(400, 404, 413, 415, 422, 429)
  async reset(@Body() body: ResetPasswordDto, @Ip() address: string): Promise<void> {
    await this.resets.reset(body.token, body.password, address);
  }
}
