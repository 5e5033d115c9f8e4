import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { unauthorized } from '../common/errors/api-exception.js';
import type { Env } from '../config/env.validation.js';
import { UsersService } from '../users/users.service.js';
import type { User } from '../users/user.entity.js';
import type { AuthUser } from './auth-user.js';
import { TokenDenyList } from './deny-list.js';
import type { TokenResponse } from './dto/token.response.js';
import { sha256 } from './hashing.js';
import { JwtKeys } from './jwt-keys.js';
import { LoginThrottle } from './login-throttle.js';
import { verifyAgainstDummy, verifyPassword } from './passwords.js';
import { RefreshToken } from './refresh-token.entity.js';

/**
 * Login, refresh, logout (SPEC §3): access tokens are JWTs (HS256, or RS256 with `kid`) with
 * `user_id`, `role`, `typ`, `fid` (the login), `iat`, `exp` (now + ACCESS_TOKEN_TTL seconds),
 * `jti`; refresh tokens are 32 random bytes
 * (base64url), stored as SHA-256, valid REFRESH_TOKEN_TTL seconds, rotated on every use.
 */
@Injectable()
export class AuthService {
  private readonly accessTtl: number;
  private readonly refreshTtl: number;

  constructor(
    private readonly users: UsersService,
    private readonly jwt: JwtService,
    @InjectRepository(RefreshToken) private readonly refreshTokens: Repository<RefreshToken>,
    private readonly keys: JwtKeys,
    private readonly denyList: TokenDenyList,
    private readonly throttle: LoginThrottle,
    config: ConfigService<Env, true>,
  ) {
    this.accessTtl = config.get('ACCESS_TOKEN_TTL', { infer: true });
    this.refreshTtl = config.get('REFRESH_TOKEN_TTL', { infer: true });
  }

  /**
   * Checks a username and password from a client address, under login throttling (SPEC §3):
   * returns the user's id and role.
   * @throws 401 `unauthorized` with the same message for an unknown username and a wrong password;
   *   429 `rate_limited` with `Retry-After` after too many failures.
   */
  async checkPassword(username: string, password: string, address: string): Promise<Pick<User, 'id' | 'role'>> {
    await this.throttle.assertAllowed(username, address);
    const user = await this.users.findCredentials(username);
    const ok = user ? await verifyPassword(user.password_hash, password) : (await verifyAgainstDummy(password), false);
    if (!user || !ok) {
      await this.throttle.recordFailure(username, address);
      throw unauthorized('invalid username or password');
    }
    await this.throttle.recordSuccess(username, address);
    return user;
  }

  /**
   * Password login: returns a new token pair of a new token family (login). `address` is the
   * client address for throttling.
   * @throws 401, 429 as {@link checkPassword}.
   */
  async login(username: string, password: string, address = ''): Promise<TokenResponse> {
    return this.issue(await this.checkPassword(username, password, address), randomUUID());
  }

  /**
   * Refresh-token rotation (SPEC §3, RFC 9700 §4.14.2): exchanges a live refresh token for a new
   * pair and retires it. Presenting a retired token revokes its whole family (reuse detection).
   * @throws 401 `unauthorized` for an unknown, expired, retired or revoked token.
   */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const now = new Date();
    const row = await this.refreshTokens.findOne({ where: { token_hash: sha256(refreshToken) } });
    if (!row) throw unauthorized('invalid refresh token');
    if (row.revoked_at !== null) {
      await this.revokeFamily(row.family_id);
      throw unauthorized('refresh token was already used; every token of this login is revoked');
    }
    if (row.expires_at.getTime() <= now.getTime()) throw unauthorized('refresh token expired');
    const claimed = await this.refreshTokens.update({ id: row.id, revoked_at: IsNull() }, { revoked_at: now });
    if (claimed.affected !== 1) {
      await this.revokeFamily(row.family_id);
      throw unauthorized('refresh token was already used; every token of this login is revoked');
    }
    const user = await this.users.findCredentialsById(row.user_id);
    if (!user) throw unauthorized('invalid refresh token');
    return this.issue(user, row.family_id);
  }

  /**
   * Logout (SPEC §3): revokes every refresh token of the caller's login and denies the access
   * token's `jti` until its `exp`, so the token is refused (401) from now on.
   */
  async logout(caller: AuthUser): Promise<void> {
    if (caller.fid) await this.revokeFamily(caller.fid);
    if (caller.jti && caller.exp) await this.denyList.deny(caller.jti, caller.exp);
  }

  /** Revokes every live refresh token of a login's family. */
  async revokeFamily(familyId: string): Promise<void> {
    await this.refreshTokens.update({ family_id: familyId, revoked_at: IsNull() }, { revoked_at: new Date() });
  }

  private async issue(user: Pick<User, 'id' | 'role'>, familyId: string): Promise<TokenResponse> {
    const token = await this.jwt.signAsync(
      { user_id: user.id, role: user.role, typ: 'access', fid: familyId },
      {
        algorithm: this.keys.algorithm,
        ...(this.keys.algorithm === 'RS256' ? { privateKey: this.keys.signingKey, keyid: this.keys.kid } : { secret: this.keys.signingKey }),
        expiresIn: this.accessTtl,
        jwtid: randomUUID(),
      },
    );
    const refresh = randomBytes(32).toString('base64url');
    const now = new Date();
    await this.refreshTokens.insert({
      token_hash: sha256(refresh),
      family_id: familyId,
      user_id: user.id,
      expires_at: new Date(now.getTime() + this.refreshTtl * 1000),
      revoked_at: null,
      created_at: now,
    });
    return { token, token_type: 'Bearer', expires_in: this.accessTtl, refresh_token: refresh };
  }
}
