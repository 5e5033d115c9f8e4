import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import type { Env } from '../../config/env.validation.js';
import { ROLES } from '../../users/user.entity.js';
import type { AccessTokenPayload, AuthUser } from '../auth-user.js';

/**
 * passport-jwt strategy for `Authorization: Bearer <jwt>` (SPEC §3). The algorithm is pinned to
 * HS256 (so `alg: none` and key confusion fail), the signature and `exp` are verified by
 * jsonwebtoken; {@link validate} further requires an explicit numeric `exp` (jsonwebtoken accepts
 * a token without one), `typ: "access"`, an integer `user_id`, a known `role` and a `jti`.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(config: ConfigService<Env, true>) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: config.get('JWT_SECRET', { infer: true }),
      algorithms: ['HS256'],
      ignoreExpiration: false,
      jsonWebTokenOptions: { clockTolerance: 0 },
    });
  }

  /** Returns the caller, or `false` (→ 401) when a claim is missing or of the wrong type. */
  validate(payload: Partial<AccessTokenPayload>): AuthUser | false {
    if (typeof payload.exp !== 'number' || payload.typ !== 'access' || typeof payload.jti !== 'string') return false;
    if (!Number.isSafeInteger(payload.user_id) || (payload.user_id as number) < 1) return false;
    if (!ROLES.includes(payload.role as (typeof ROLES)[number])) return false;
    return { id: payload.user_id as number, role: payload.role as AuthUser['role'], jti: payload.jti };
  }
}
