import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { JwtService } from '@nestjs/jwt';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { ApiException, unauthorized } from '../common/errors/api-exception.js';
import type { Env } from '../config/env.validation.js';
import { UsersService } from '../users/users.service.js';
import type { User } from '../users/user.entity.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { issuedAtClaims, TokenDenyList } from './deny-list.js';
import type { TokenResponse } from './dto/token.response.js';
import { EmailVerificationsService } from './email-verifications.service.js';
import { sha256 } from './hashing.js';
import { JwtKeys } from './jwt-keys.js';
import { type LoginClient, LoginRecords } from './login-records.js';
import { LoginThrottle } from './login-throttle.js';
import { verifyAgainstDummy, verifyPassword } from './passwords.js';
import { RefreshToken } from './refresh-token.entity.js';
import type { LoginChallengeResponse } from './dto/totp.dto.js';
import { type SecondFactor, type SignInKind, TotpService } from './totp.service.js';

/**
 * A user signed in with a password (and a second factor when the account has one on), with when
 * its authority was read (`readAtMs`, epoch ms). `totpSetup`: REQUIRE_ADMIN_TOTP and an admin
 * without two-factor authentication: the login may only enrol
 * (docs/authentication.md#requiring-two-factor-authentication-for-admins).
 */
export type SignedIn = Pick<User, 'id' | 'role'> & { readAtMs: number; totpSetup?: true };

/** What a password step leads to: a signed-in user, or a challenge for the second factor. */
export type PasswordStep = { user: SignedIn; challenge?: undefined } | { challenge: LoginChallengeResponse; user?: undefined };

/**
 * Login, refresh, logout (docs/authentication.md#bearer-tokens-jwt): access tokens are JWTs (HS256, or RS256 with `kid`) with
 * `user_id`, `role`, `typ`, `fid` (the login), `iat`, `iat_ms` (when the user's authority was
 * read, epoch ms), `exp` (`iat` + ACCESS_TOKEN_TTL seconds), `jti`; refresh tokens are 32 random bytes
 * (base64url), stored as SHA-256, valid REFRESH_TOKEN_TTL seconds, rotated on every use.
 */
@Injectable()
export class AuthService {
  private readonly accessTtl: number;
  private readonly refreshTtl: number;
  private readonly requireVerifiedEmail: boolean;
  private readonly requireAdminTotp: boolean;

  constructor(
    private readonly users: UsersService,
    private readonly jwt: JwtService,
    @InjectRepository(RefreshToken) private readonly refreshTokens: Repository<RefreshToken>,
    private readonly keys: JwtKeys,
    private readonly denyList: TokenDenyList,
    private readonly throttle: LoginThrottle,
    private readonly verifications: EmailVerificationsService,
    private readonly records: LoginRecords,
    private readonly totp: TotpService,
    config: ConfigService<Env, true>,
  ) {
    this.accessTtl = config.get('ACCESS_TOKEN_TTL', { infer: true });
    this.refreshTtl = config.get('REFRESH_TOKEN_TTL', { infer: true });
    this.requireVerifiedEmail = config.get('REQUIRE_VERIFIED_EMAIL', { infer: true });
    this.requireAdminTotp = config.get('REQUIRE_ADMIN_TOTP', { infer: true });
  }

  /**
   * Checks a username and password from a client address, under login throttling (docs/authentication.md#login-throttling):
   * returns the user's id and role, and when they were read (`readAtMs`, epoch ms, the token's `iat_ms`).
   * Every password sign-in (`POST /login`, `POST /sessions`, the OAuth sign-in form) comes here.
   * @throws 401 `unauthorized` with the same message for an unknown username and a wrong password;
   *   429 `rate_limited` with `Retry-After` after too many failures; with REQUIRE_VERIFIED_EMAIL, 403
   *   `forbidden` ({@link emailUnverified}) for the right password of an account without a verified
   *   address, after a new verification mail went out if the account's mail throttle allows
   *   (docs/authentication.md#e-mail-verification).
   */
  async checkPassword(username: string, password: string, address: string): Promise<Pick<User, 'id' | 'role'> & { readAtMs: number }> {
    // the slot is taken before the password is checked: concurrent attempts cannot overrun the limits
    await this.throttle.reserve(username, address);
    let user: Awaited<ReturnType<UsersService['findCredentials']>>;
    let ok: boolean;
    const readAtMs = Date.now();
    try {
      user = await this.users.findCredentials(username);
      ok = user ? await verifyPassword(user.password_hash, password) : (await verifyAgainstDummy(password), false);
    } catch (error) {
      // not a wrong password (e.g. the database failed): the attempt does not count
      await this.throttle.cancel(username, address).catch(() => undefined);
      throw error;
    }
    // a failure keeps its slot: that slot is the failure count
    if (!user || !ok) throw unauthorized('invalid username or password');
    // the password was right: not a failure, whatever comes next
    await this.throttle.recordSuccess(username, address);
    if (this.requireVerifiedEmail && (user.email === null || user.email_verified_at === null)) {
      if (user.email !== null) await this.verifications.resendAtSignIn(user.id, user.email);
      throw emailUnverified(user.email !== null);
    }
    return { id: user.id, role: user.role, readAtMs };
  }

  /**
   * Password login: a new token pair of a new token family (login), recorded among the user's
   * logins (docs/authentication.md#your-logins) with `client`, whose address is also the one
   * throttled; for an account with two-factor authentication on, a challenge instead
   * (docs/authentication.md#two-factor-authentication-totp), completed by {@link completeChallenge}.
   * @throws 401, 429 as {@link checkPassword}.
   */
  async login(username: string, password: string, client: LoginClient = { address: '' }): Promise<TokenResponse | LoginChallengeResponse> {
    const step = await this.passwordStep(username, password, client.address, 'token');
    if (step.challenge) return step.challenge;
    return this.startTokenLogin(step.user, client);
  }

  /**
   * Every password sign-in's first step: {@link checkPassword}, then, when the account has
   * two-factor authentication on, a challenge for `kind` (docs/authentication.md#two-factor-authentication-totp);
   * else the signed-in user (limited to enrolling for an admin without it under REQUIRE_ADMIN_TOTP).
   * @throws as {@link checkPassword}; 503 when the database or the store is unavailable.
   */
  async passwordStep(username: string, password: string, address: string, kind: SignInKind): Promise<PasswordStep> {
    const user = await this.checkPassword(username, password, address);
    if (await this.totp.isEnabled(user.id)) return { challenge: await this.totp.startChallenge(user.id, kind) };
    return { user: this.requireAdminTotp && user.role === 'admin' ? { ...user, totpSetup: true } : user };
  }

  /**
   * `POST /v1/login-challenges`: the second step of a sign-in; returns what the challenge signs in
   * to and its user, read now. A password set since the password step voids the challenge.
   * @throws 401 `unauthorized` for an unknown, used or expired challenge or a wrong factor; 422, 429 as TotpService.completeChallenge.
   */
  async completeChallenge(challenge: string, factor: SecondFactor): Promise<{ kind: SignInKind; user: SignedIn }> {
    const done = await this.totp.completeChallenge(challenge, factor);
    const readAtMs = Date.now();
    const user = await this.users.findCredentialsById(done.userId);
    const passwordSetAt = user?.password_changed_at ? new Date(user.password_changed_at).getTime() : undefined;
    if (!user || (passwordSetAt !== undefined && passwordSetAt >= done.passwordCheckedAt)) {
      throw unauthorized('sign-in challenge unknown, used or expired; sign in again');
    }
    return { kind: done.kind, user: { id: user.id, role: user.role, readAtMs } };
  }

  /** Starts a token login of `user` (docs/authentication.md#your-logins): a new family, recorded with `client`, and its first pair. */
  async startTokenLogin(user: SignedIn, client: LoginClient): Promise<TokenResponse> {
    const familyId = randomUUID();
    await this.records.start('token', familyId, user.id, client, new Date(Date.now() + this.refreshTtl * 1000));
    return this.issue(user, familyId);
  }

  /**
   * Refresh-token rotation (docs/authentication.md#refreshing-rotation-and-reuse-detection, RFC 9700 §4.14.2): exchanges a live refresh token for a new
   * pair and retires it. Presenting a retired token revokes its whole family (reuse detection).
   * @throws 401 `unauthorized` for an unknown, expired, retired or revoked token.
   */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const now = new Date();
    const row = await this.refreshTokens.findOne({ where: { token_hash: sha256(refreshToken) } });
    if (!row) throw unauthorized('invalid refresh token');
    if (row.revoked_at !== null) return this.reused(row.family_id);
    if (row.expires_at.getTime() <= now.getTime()) throw unauthorized('refresh token expired');
    const claimed = await this.refreshTokens.update({ id: row.id, revoked_at: IsNull() }, { revoked_at: now });
    if (claimed.affected !== 1) return this.reused(row.family_id);
    const readAtMs = Date.now();
    const user = await this.users.findCredentialsById(row.user_id);
    if (!user) throw unauthorized('invalid refresh token');
    // an admin's login limited to enrolling stays so until two-factor authentication is on
    const totpSetup = this.requireAdminTotp && user.role === 'admin' && !(await this.totp.isEnabled(user.id));
    const pair = await this.issue({ id: user.id, role: user.role, readAtMs, ...(totpSetup ? { totpSetup } : {}) }, row.family_id);
    await this.records.refreshed(row.family_id, new Date(Date.now() + this.refreshTtl * 1000));
    // a concurrent reuse may have revoked the family before this pair's refresh token was stored:
    // its mark is read now that the token exists, so the new pair cannot outlive the revocation
    if (await this.denyList.isFamilyDenied(row.family_id)) await this.revokeFamily(row.family_id);
    return pair;
  }

  /**
   * A retired refresh token came back (RFC 9700 §4.14.2): the whole login is revoked — its refresh
   * tokens in the database and, through `deny-fid:<fid>`, every access token it issued. The mark
   * is written first, so a rotation racing this one sees it once its own token is stored.
   * @throws always 401 `unauthorized`.
   */
  private async reused(familyId: string): Promise<never> {
    await this.endLogin(familyId);
    throw unauthorized('refresh token was already used; every token of this login is revoked');
  }

  /**
   * Logout (docs/authentication.md#logging-out-and-the-deny-list): denies the access token's `jti` until its `exp` and every access token of
   * the caller's login (`deny-fid`), and revokes the login's refresh tokens: all refused (401) from now on.
   */
  async logout(caller: AuthUser): Promise<void> {
    if (caller.jti && caller.exp) await this.denyList.deny(caller.jti, caller.exp);
    if (caller.fid) await this.endLogin(caller.fid);
  }

  /**
   * Ends a token login (docs/authentication.md#your-logins): denies every access token of the
   * family (`deny-fid`, written first, see {@link reused}), revokes its refresh tokens and deletes
   * its logins row. @throws 503 when the store is unavailable.
   */
  async endLogin(familyId: string): Promise<void> {
    await this.denyList.denyFamily(familyId);
    await this.revokeFamily(familyId);
    await this.records.ended('token', familyId);
  }

  /** Revokes every live refresh token of a login's family. */
  async revokeFamily(familyId: string): Promise<void> {
    await this.refreshTokens.update({ family_id: familyId, revoked_at: IsNull() }, { revoked_at: new Date() });
  }

  /** Signs an access token dated by `user.readAtMs` (see issuedAtClaims) and stores a new refresh token of the family. */
  private async issue(user: SignedIn, familyId: string): Promise<TokenResponse> {
    const token = await this.jwt.signAsync(
      { user_id: user.id, role: user.role, typ: 'access', fid: familyId, ...issuedAtClaims(user.readAtMs), ...(user.totpSetup ? { totp_setup: true } : {}) },
      {
        ...this.keys.signOptions,
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

/**
 * The 403 `forbidden` of a password sign-in refused by REQUIRE_VERIFIED_EMAIL
 * (docs/authentication.md#e-mail-verification): `hasAddress` tells the account's case (a link was
 * mailed to its address, or it has none to verify).
 */
export function emailUnverified(hasAddress: boolean): ApiException {
  return new ApiException(
    403,
    hasAddress
      ? 'e-mail address not verified: open the link mailed to the address of the account, then sign in again'
      : 'e-mail address not verified: the account has none; an admin can set one, then open the link mailed to it',
  );
}
