import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

/** Body of `POST /v1/email-verifications` (docs/authentication.md#e-mail-verification). */
@ApiSchema({ name: 'EmailVerificationBody' })
export class VerifyEmailDto {
  /** The token of the mailed link (the part after `#token=`); works once, until it expires. */
  @ApiProperty({ writeOnly: true, example: 'Vb7Qm2xK9pL0sN4dR8tY1wZ3cF6hJ5gA2eU0iO9kM7q' })
  @IsNotEmpty()
  @IsString()
  @MaxLength(128)
  token: string;
}

/** What `POST /v1/email-verification-requests` answers. */
@ApiSchema({ name: 'EmailVerificationRequestAccepted' })
export class EmailVerificationRequestAccepted {
  /** Always the same sentence. */
  @ApiProperty({ maxLength: 200, example: 'A link to verify your e-mail address is on its way.' })
  message: string;

  /** Seconds the mailed link stays valid (EMAIL_VERIFICATION_TTL). */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 60, maximum: 604_800, example: 86_400 })
  expires_in: number;
}
