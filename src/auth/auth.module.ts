import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Env } from '../config/env.validation.js';
import { UsersModule } from '../users/users.module.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { TokenDenyList } from './deny-list.js';
import { JwtKeys } from './jwt-keys.js';
import { WellKnownController } from './well-known.controller.js';
import { JwtAuthGuard } from './guards/jwt-auth.guard.js';
import { RolesGuard } from './guards/roles.guard.js';
import { RefreshToken } from './refresh-token.entity.js';
import { JwtStrategy } from './strategies/jwt.strategy.js';

/**
 * Authentication and authorization (SPEC §3): login, refresh, logout, the JWKS, the JWT strategy
 * with its deny list, and the two
 * global guards — authentication first (401), then roles (403).
 */
@Module({
  imports: [
    PassportModule,
    UsersModule,
    TypeOrmModule.forFeature([RefreshToken]),
    JwtModule.register({}),
  ],
  controllers: [AuthController, WellKnownController],
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
    TokenDenyList,
    AuthService,
    JwtStrategy,
    { provide: APP_GUARD, useClass: JwtAuthGuard },
    { provide: APP_GUARD, useClass: RolesGuard },
  ],
})
export class AuthModule {}
