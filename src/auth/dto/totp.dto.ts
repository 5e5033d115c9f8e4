import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** A current code of the authenticator app: six digits (RFC 6238, 30-second steps). */
const CODE = /^[0-9]{6}$/;
/** A recovery code: ten letters and digits of base32, a hyphen after the fifth optional, any case. */
const RECOVERY_CODE = /^[A-Za-z2-7]{5}-?[A-Za-z2-7]{5}$/;

/** What `POST /v1/totp-enrolments` answers, once (docs/authentication.md#two-factor-authentication-totp). */
@ApiSchema({ name: 'TotpEnrolment' })
export class TotpEnrolmentResponse {
  /** The shared secret, base32, for typing into an authenticator app; shown only here. */
  @ApiProperty({ maxLength: 64, example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' })
  secret: string;

  /** The same secret as an `otpauth://totp/…` URI, for a QR code. */
  @ApiProperty({
    format: 'uri',
    maxLength: 512,
    example: 'otpauth://totp/resource-api:ada_l?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=resource-api&algorithm=SHA1&digits=6&period=30',
  })
  otpauth_uri: string;
}

/** Body of `POST /v1/totp-confirmations`. */
@ApiSchema({ name: 'TotpConfirmationBody' })
export class ConfirmTotpDto {
  /** A current code of the app the enrolment's secret was given to. */
  @ApiProperty({ writeOnly: true, pattern: CODE.source, minLength: 6, maxLength: 6, example: '492039' })
  @IsString()
  @Matches(CODE, { message: 'code must be six digits' })
  code: string;
}

/** What `POST /v1/totp-confirmations` answers: two-factor authentication is on, and the recovery codes, shown only here. */
@ApiSchema({ name: 'TotpConfirmation' })
export class TotpConfirmationResponse {
  /** Always true. */
  @ApiProperty({ type: 'boolean', enum: [true], example: true })
  totp_enabled: true;

  /** Ten single-use codes that stand in for a code when the app is lost; stored only hashed. */
  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: 11, pattern: '^[a-z2-7]{5}-[a-z2-7]{5}$' },
    minItems: 10,
    maxItems: 10,
    example: [
      'k7mq2-xv4ta',
      'p3nzr-6hdwe',
      'b5ty7-qwm2k',
      'f4jx6-zc3ns',
      'u2hvd-7rkpa',
      'm6wqe-t3yzb',
      'c7pnf-2xkdu',
      'g3rtz-5mqwh',
      'y4dka-6vpne',
      'w2sfj-3bzqm',
    ],
  })
  recovery_codes: string[];
}

/** Body of `POST /v1/totp-deactivations`: a current code or the account's password. */
@ApiSchema({ name: 'TotpDeactivationBody' })
export class DeactivateTotpDto {
  /** A current code of the authenticator app. */
  @ApiPropertyOptional({ writeOnly: true, pattern: CODE.source, minLength: 6, maxLength: 6, example: '492039' })
  @IsOptional()
  @IsString()
  @Matches(CODE, { message: 'code must be six digits' })
  code?: string;

  /** The account's password, instead of a code. */
  @ApiPropertyOptional({ writeOnly: true, format: 'password', minLength: 1, maxLength: 128, example: 'correct horse battery' })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  password?: string;
}

/** Body of `POST /v1/login-challenges`: the challenge and a current code, or a recovery code. */
@ApiSchema({ name: 'LoginChallengeBody' })
export class CompleteLoginChallengeDto {
  /** The `challenge` the password step answered; works once, for `expires_in` seconds. */
  @ApiProperty({ writeOnly: true, minLength: 1, maxLength: 64, example: 'cH4lL3ng3_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  challenge: string;

  /** A current code of the authenticator app. */
  @ApiPropertyOptional({ writeOnly: true, pattern: CODE.source, minLength: 6, maxLength: 6, example: '492039' })
  @IsOptional()
  @IsString()
  @Matches(CODE, { message: 'code must be six digits' })
  code?: string;

  /** A recovery code, instead of `code`; each works once. */
  @ApiPropertyOptional({ writeOnly: true, pattern: RECOVERY_CODE.source, maxLength: 11, example: 'k7mq2-xv4ta' })
  @IsOptional()
  @IsString()
  @Matches(RECOVERY_CODE, { message: 'recovery_code must be a recovery code such as k7mq2-xv4ta' })
  recovery_code?: string;
}

/** The password step's answer for an account with two-factor authentication (202): complete it at `POST /v1/login-challenges`. */
@ApiSchema({ name: 'LoginChallenge' })
export class LoginChallengeResponse {
  /** Always true: a second step is needed. */
  @ApiProperty({ type: 'boolean', enum: [true], example: true })
  mfa_required: true;

  /** Send it to `POST /v{version}/login-challenges` with a code; works once. */
  @ApiProperty({ maxLength: 64, example: 'cH4lL3ng3_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7' })
  challenge: string;

  /** Seconds the challenge stays valid. */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 1, maximum: 300, example: 300 })
  expires_in: number;
}
