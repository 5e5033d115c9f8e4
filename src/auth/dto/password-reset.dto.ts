import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsEmail, IsNotEmpty, IsString, Length, MaxLength } from 'class-validator';

/** Body of `POST /v1/password-reset-requests` (docs/authentication.md#password-reset). */
@ApiSchema({ name: 'PasswordResetRequestBody' })
export class RequestPasswordResetDto {
  /** The e-mail address of the account (compared case-insensitively). */
  @ApiProperty({ type: 'string', format: 'email', example: 'ada@example.com' })
  @IsNotEmpty()
  @IsString()
  @IsEmail()
  @MaxLength(254)
  email: string;
}

/** Body of `POST /v1/password-resets` (docs/authentication.md#password-reset). */
@ApiSchema({ name: 'PasswordResetBody' })
export class ResetPasswordDto {
  /** The token of the mailed link (the part after `#token=`); works once, until it expires. */
  @ApiProperty({ writeOnly: true, example: 'pmK3x9bX2o0V3n5Qe1mJbq4C8yT6zRLwA7dHfU2sN0c' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(128)
  token: string;

  /** The new password, 8-128 characters, as at registration. Never returned. */
  @ApiProperty({ writeOnly: true, format: 'password', example: 'a new correct horse' })
  @IsNotEmpty()
  @IsString()
  @Length(8, 128)
  password: string;
}

/** What `POST /v1/password-reset-requests` answers, whether or not an account has the address. */
@ApiSchema({ name: 'PasswordResetRequestAccepted' })
export class PasswordResetRequestAccepted {
  /** Always the same sentence. */
  @ApiProperty({ maxLength: 200, example: 'If an account has this e-mail address, a link to reset its password is on its way.' })
  message: string;

  /** Seconds the mailed link stays valid (PASSWORD_RESET_TTL). */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 60, maximum: 86_400, example: 1800 })
  expires_in: number;
}
