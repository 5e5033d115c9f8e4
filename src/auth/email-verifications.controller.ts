import { Body, Controller, Header, HttpCode, Ip, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNoContentResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { Public } from '../common/caller/public.decorator.js';
import { ErrorResp } from '../common/errors/error-resp.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiCredentials, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { EmailVerificationRequestAccepted, VerifyEmailDto } from './dto/email-verification.dto.js';
import { EmailVerificationsService } from './email-verifications.service.js';

/**
 * E-mail verification (docs/authentication.md#e-mail-verification): `POST /v1/email-verifications`
 * (public: the mailed token is the authority) and `POST /v1/email-verification-requests` (the
 * signed-in user, for their current address).
 */
@ApiTags('auth')
@Controller()
export class EmailVerificationsController {
  constructor(private readonly verifications: EmailVerificationsService) {}

  /**
   * Verify an e-mail address with the mailed token
   *
   * Sets `email_verified_at` of the account the link was mailed for, if its address is still the
   * one the link went to. The token works once and until it expires (EMAIL_VERIFICATION_TTL).
   */
  @Public()
  @Post('email-verifications')
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'verifyEmail', summary: 'Verify an e-mail address with the mailed token' })
  @ApiNoContentResponse({ description: 'The address is verified: `email_verified_at` is set.' })
  @ApiErrors(400, 404, 413, 415, 422, 429)
  async verify(@Body() body: VerifyEmailDto, @Ip() address: string): Promise<void> {
    await this.verifications.verify(body.token, address);
  }

  /**
   * Ask for a new verification link for your address
   *
   * Mails a new one-time link (`<APP_URL>/verify-email#token=…`) to the caller's current address;
   * earlier links stop working. No body (or `{}`). Signed-in users only (bearer token or session),
   * not API keys or OAuth tokens.
   */
  @ApiCredentials()
  @RequireScope(null)
  @Post('email-verification-requests')
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'requestEmailVerification', summary: 'Ask for a new verification link for your e-mail address' })
  @ApiAcceptedResponse({ type: EmailVerificationRequestAccepted, description: 'Accepted: the mail with a new link goes out.' })
  @ApiResponse({
    status: 409,
    description: 'The account has no e-mail address, or it is verified already: nothing to send.',
    type: ErrorResp,
    example: { error: 'the e-mail address of the account is verified already', code: 'conflict', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  })
  @ApiErrors(400, 401, 403, 404, 429)
  request(@CurrentUser() caller: AuthUser): Promise<EmailVerificationRequestAccepted> {
    return this.verifications.request(caller.id);
  }
}
