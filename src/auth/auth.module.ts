import { Module, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_GUARD, DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { type RouteGuard, RouteGuards } from '../common/guards/route-guards.js';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IsNull } from 'typeorm';
import type { Env } from '../config/env.validation.js';
import { UserLifecycle } from '../users/user-lifecycle.js';
import { MailModule } from '../mail/mail.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { TokenDenyList } from './deny-list.js';
import { JwtKeys } from './jwt-keys.js';
import { WellKnownController } from './well-known.controller.js';
import { ApiKeysController } from './api-keys.controller.js';
import { API_KEYS } from './api-keys.resource.js';
import { AUTH } from './auth.resource.js';
import { Login } from './login.entity.js';
import { LoginRecords } from './login-records.js';
import { LoginsController } from './logins.controller.js';
import { LOGINS } from './logins.resource.js';
import { LoginsService } from './logins.service.js';
import { ApiKeysService } from './api-keys.service.js';
import { RateLimitGuard } from './guards/rate-limit.guard.js';
import { AuthenticationGuard } from './guards/authentication.guard.js';
import { ScopeGuard } from './guards/scope.guard.js';
import { LoginThrottle } from './login-throttle.js';
import { RateLimiter } from './rate-limiter.js';
import { EmailVerificationThrottle } from './email-verification-throttle.js';
import { EmailVerificationsController } from './email-verifications.controller.js';
import { EmailVerificationsService } from './email-verifications.service.js';
import { PasswordResetThrottle } from './password-reset-throttle.js';
import { PasswordResetToken } from './password-reset-token.entity.js';
import { PasswordResetsController } from './password-resets.controller.js';
import { PasswordResetsService } from './password-resets.service.js';
import { RefreshToken } from './refresh-token.entity.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsService } from './sessions.service.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { SessionStrategy } from './strategies/session.strategy.js';
import { RolesGuard } from './guards/roles.guard.js';
import { TotpController } from './totp.controller.js';
import { TotpService } from './totp.service.js';
import { TotpThrottle } from './totp-throttle.js';
import { JwtStrategy } from './strategies/jwt.strategy.js';

/**
 * Authentication and authorization (docs/authentication.md): login, refresh, logout, two-factor authentication (TOTP), password reset and e-mail verification by mail, the JWKS, API keys,
 * cookie sessions, the three passport strategies (JWT with its deny list, API key, session),
 * login throttling, the request-rate limit of every caller (docs/limits.md#rates), and the
 * global guards — authentication first (401), then roles (403). Revokes a user's tokens when its
 * password or role changes or it is deleted (docs/extending.md#user-lifecycle-events).
 */
@Module({
  imports: [
    DiscoveryModule,
    PassportModule,
    UsersModule,
    MailModule,
    TypeOrmModule.forFeature([...AUTH.entities, ...API_KEYS.entities, ...LOGINS.entities]),
    JwtModule.register({}),
  ],
  controllers: [
    AuthController,
    PasswordResetsController,
    EmailVerificationsController,
    WellKnownController,
    ApiKeysController,
    SessionsController,
    LoginsController,
    TotpController,
  ],
  providers: [
    {
      provide: JwtKeys,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Env, true>) =>
        new JwtKeys({
          JWT_SECRET: config.get('JWT_SECRET', { infer: true }),
          JWT_PRIVATE_KEY: config.get('JWT_PRIVATE_KEY', { infer: true }),
          JWT_PUBLIC_KEY: config.get('JWT_PUBLIC_KEY', { infer: true }),
        }),
    },
    LoginThrottle,
    PasswordResetThrottle,
    PasswordResetsService,
    EmailVerificationThrottle,
    EmailVerificationsService,
    RateLimiter,
    TotpThrottle,
    TotpService,
    LoginRecords,
    AuthService,
    LoginsService,
    ApiKeysService,
    SessionsService,
    JwtStrategy,
    ApiKeyStrategy,
    SessionStrategy,
    // the global guards, as one (each route runs those its metadata calls for), in this order:
    // who is calling (401), how often (429), with which scope and role (403)
    AuthenticationGuard,
    RateLimitGuard,
    ScopeGuard,
    RolesGuard,
    {
      provide: RouteGuards,
      inject: [DiscoveryService, AuthenticationGuard, RateLimitGuard, ScopeGuard, RolesGuard],
      useFactory: (discovery: DiscoveryService, ...guards: RouteGuard[]) => new RouteGuards(guards, discovery),
    },
    { provide: APP_GUARD, useExisting: RouteGuards },
  ],
  // for the OAuth module: sign-in, sessions and the token keys (the deny list is the global SharedStateModule's)
  exports: [AuthService, SessionsService, JwtKeys],
})
export class AuthModule implements OnModuleInit {
  constructor(
    private readonly lifecycle: UserLifecycle,
    private readonly denyList: TokenDenyList,
    private readonly verifications: EmailVerificationsService,
  ) {}

  /**
   * The tokens' reactions to the user lifecycle. Authority is current
   * (docs/authentication.md#logging-out-and-the-deny-list): a new password or role, or a deletion,
   * denies every access token of the user issued before it — stamped before the change (a store
   * outage, 503, then leaves the change undone rather than old tokens alive) and again once it is
   * committed (a token issued from a read of the old state falls before the second stamp). A new
   * password also ends every password login (a stolen refresh token must not outlive it): its
   * refresh tokens are revoked and its password-reset tokens deleted in the change's transaction,
   * so the password never changes without them going (its sessions end by `password_changed_at`).
   * A new address (docs/authentication.md#e-mail-verification) ends the reset links, which went to
   * the old one, and the earlier verification links, and queues a verification mail for it, in
   * the change's transaction; the mail worker is woken once it is committed. A new password also
   * deletes the user's logins (docs/authentication.md#your-logins).
   */
  onModuleInit(): void {
    const revokeAccessTokens = async (userId: number): Promise<void> => {
      await this.denyList.revokeUser(userId);
    };
    this.lifecycle.around(['user.password_changed', 'user.role_changed', 'user.deleted'], 'access tokens', {
      before: revokeAccessTokens,
      afterCommit: revokeAccessTokens,
    });
    this.lifecycle.on('user.password_changed', 'refresh tokens', async ({ manager, userId, at }) => {
      await manager.update(RefreshToken, { user_id: userId, revoked_at: IsNull() }, { revoked_at: at });
    });
    this.lifecycle.on('user.password_changed', 'logins', async ({ manager, userId }) => {
      await manager.delete(Login, { user_id: userId });
    });
    this.lifecycle.on('user.password_changed', 'password-reset tokens', async ({ manager, userId }) => {
      await manager.delete(PasswordResetToken, { user_id: userId });
    });
    this.lifecycle.on('user.email_changed', 'password-reset tokens', async ({ manager, userId }) => {
      await manager.delete(PasswordResetToken, { user_id: userId });
    });
    this.lifecycle.on('user.email_changed', 'e-mail verification', (change) => this.verifications.onEmailChanged(change));
    this.lifecycle.around(['user.email_changed'], 'verification mail', {
      before: async () => undefined,
      afterCommit: async () => this.verifications.wake(),
    });
  }
}
