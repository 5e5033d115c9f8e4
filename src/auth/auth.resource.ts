import { defineResource } from '../common/resources/define-resource.js';
import { EmailVerificationToken } from './email-verification-token.entity.js';
import { PasswordResetToken } from './password-reset-token.entity.js';
import { RefreshToken } from './refresh-token.entity.js';
import { TotpRecoveryCode } from './totp-recovery-code.entity.js';
import { TotpSecret } from './totp-secret.entity.js';

/** Tokens (docs/authentication.md#bearer-tokens-jwt): log in, refresh, log out, the JWKS, password reset (docs/authentication.md#password-reset), e-mail verification (docs/authentication.md#e-mail-verification), two-factor authentication (docs/authentication.md#two-factor-authentication-totp). No scopes: scoped credentials cannot use it. */
export const AUTH = defineResource({
  name: 'auth',
  description:
    'Tokens: log in, refresh, log out; password reset and e-mail verification by mail; two-factor authentication (TOTP); the public keys that verify access tokens.',
  scopes: false,
  entities: [RefreshToken, PasswordResetToken, EmailVerificationToken, TotpSecret, TotpRecoveryCode],
  module: () => import('./auth.module.js').then((file) => file.AuthModule),
});
