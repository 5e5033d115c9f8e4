import { randomBytes, randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { generateSecret, generateURI, verify } from 'otplib';
import { DataSource, IsNull, Not } from 'typeorm';
import { ApiException, conflict, unauthorized, validationFailed } from '../common/errors/api-exception.js';
import { totpKeyOf, type Env } from '../config/env.validation.js';
import { SharedStore } from '../store/shared-store.js';
import { User } from '../users/user.entity.js';
import type { LoginChallengeResponse, TotpConfirmationResponse, TotpEnrolmentResponse } from './dto/totp.dto.js';
import { sha256 } from './hashing.js';
import { verifyPassword } from './passwords.js';
import { TotpCipher } from './totp-cipher.js';
import { TotpRecoveryCode } from './totp-recovery-code.entity.js';
import { TotpSecret } from './totp-secret.entity.js';
import { TotpThrottle } from './totp-throttle.js';

/** RFC 6238 time step, seconds (the authenticator apps' default). */
const PERIOD_S = 30;
/** Codes accepted one step either side of now (clock drift, typing time). */
const TOLERANCE_S = PERIOD_S;
/** How many recovery codes a confirmed enrolment gets. */
export const RECOVERY_CODE_COUNT = 10;
/** Seconds a sign-in challenge stays valid. */
export const CHALLENGE_TTL_S = 300;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** What a sign-in that passed its password step is for: a token pair or a cookie session. */
export type SignInKind = 'token' | 'session';

/** A second factor: a current code or a recovery code (exactly one). */
export interface SecondFactor {
  code?: string;
  recovery_code?: string;
}

/** A challenge as stored under `totp-challenge:<SHA-256>`: its user, what it signs in to, when the password was checked (epoch ms). */
interface StoredChallenge {
  user_id: number;
  kind: SignInKind;
  created_at: number;
}

/**
 * Two-factor authentication with TOTP (RFC 6238; docs/authentication.md#two-factor-authentication-totp).
 * A signed-in user enrols ({@link enrol}: a new secret, shown once, stored encrypted), confirms
 * with a current code ({@link confirm}: on, with ten recovery codes shown once and stored as
 * SHA-256) and turns it off with a code or the password ({@link deactivate}). A password sign-in of
 * an account with it on gets a challenge ({@link startChallenge}) instead of a login, completed by
 * {@link completeChallenge} with a code or a recovery code. A code is accepted once: the time step
 * of the last accepted code is kept per account and only a later one passes (one conditional
 * UPDATE, so two requests with one code cannot both pass). Every check takes a slot of the
 * account's {@link TotpThrottle} first. Enrolment is off (404) in production without
 * TOTP_ENCRYPTION_KEY. Secrets and codes are never logged.
 */
@Injectable()
export class TotpService {
  private readonly cipher: TotpCipher | undefined;
  private readonly issuer: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly store: SharedStore,
    private readonly throttle: TotpThrottle,
    config: ConfigService<Env, true>,
  ) {
    const key = totpKeyOf({ TOTP_ENCRYPTION_KEY: config.get('TOTP_ENCRYPTION_KEY', { infer: true }), NODE_ENV: config.get('NODE_ENV', { infer: true }) });
    this.cipher = key ? new TotpCipher(key) : undefined;
    this.issuer = config.get('TOTP_ISSUER', { infer: true });
  }

  /** Whether user `userId` has two-factor authentication on (a confirmed enrolment). @throws 503 database unavailable. */
  async isEnabled(userId: number): Promise<boolean> {
    return (await this.secrets().count({ where: { user_id: userId, enabled_at: Not(IsNull()) } })) === 1;
  }

  /**
   * `POST /v1/totp-enrolments`: a new secret for user `userId`, pending until confirmed (replacing
   * an earlier pending one), returned once as base32 and as an `otpauth://` URI.
   * @throws 404 when enrolment is off; 409 `conflict` when two-factor authentication is on already.
   */
  async enrol(userId: number): Promise<TotpEnrolmentResponse> {
    const cipher = this.enabledCipher();
    const user = await this.dataSource.getRepository(User).findOne({ where: { id: userId }, select: { id: true, username: true } });
    if (!user) throw unauthorized('the account no longer exists');
    const existing = await this.secrets().findOne({ where: { user_id: userId }, select: { user_id: true, enabled_at: true } });
    if (existing?.enabled_at) throw conflict('two-factor authentication is on already; turn it off first (POST /totp-deactivations)');
    const secret = generateSecret();
    const row = { user_id: userId, secret_encrypted: cipher.encrypt(secret, userId), enabled_at: null, last_step: null, created_at: new Date() };
    if (existing) {
      const replaced = await this.secrets().update({ user_id: userId, enabled_at: IsNull() }, row);
      if (replaced.affected !== 1) throw conflict('two-factor authentication was turned on meanwhile');
    } else {
      await this.secrets().insert(row);
    }
    return { secret, otpauth_uri: generateURI({ issuer: this.issuer, label: user.username, secret }) };
  }

  /**
   * `POST /v1/totp-confirmations`: turns two-factor authentication on with a current `code` of the
   * pending secret; returns ten new recovery codes (any earlier ones are deleted).
   * @throws 404 when enrolment is off; 409 when there is no pending enrolment; 422 on `code` when it
   *   is wrong; 429 after too many wrong codes.
   */
  async confirm(userId: number, code: string): Promise<TotpConfirmationResponse> {
    const cipher = this.enabledCipher();
    const pending = await this.secrets().findOne({ where: { user_id: userId, enabled_at: IsNull() } });
    if (!pending) throw conflict('no enrolment to confirm: start one with POST /totp-enrolments');
    const step = await this.throttled(userId, async () => this.matchingStep(cipher.decrypt(pending.secret_encrypted, userId), code));
    if (step === null) throw validationFailed([{ field: 'code', message: 'code is wrong or expired' }]);
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.dataSource.transaction(async (manager) => {
      const now = new Date();
      // the secret the code was checked against, still pending: a concurrent enrolment or confirmation loses
      const enabled = await manager
        .getRepository(TotpSecret)
        .update({ user_id: userId, enabled_at: IsNull(), secret_encrypted: pending.secret_encrypted }, { enabled_at: now, last_step: step });
      if (enabled.affected !== 1) throw conflict('the enrolment changed meanwhile; start again with POST /totp-enrolments');
      await manager.delete(TotpRecoveryCode, { user_id: userId });
      await manager.insert(
        TotpRecoveryCode,
        codes.map((recovery) => ({ user_id: userId, code_hash: recoveryHash(userId, recovery), created_at: now })),
      );
    });
    return { totp_enabled: true, recovery_codes: codes };
  }

  /**
   * `POST /v1/totp-deactivations`: turns two-factor authentication off with a current `code` or the
   * account's `password` (exactly one); the secret and the recovery codes are deleted.
   * @throws 409 when it is not on; 422 when neither or both are given, or the one given is wrong;
   *   429 after too many wrong attempts.
   */
  async deactivate(userId: number, proof: { code?: string; password?: string }): Promise<void> {
    if ((proof.code === undefined) === (proof.password === undefined)) {
      throw validationFailed([{ field: 'code', message: 'give either code or password' }]);
    }
    const active = await this.active(userId);
    if (!active) throw conflict('two-factor authentication is not on');
    if (proof.code !== undefined) {
      if (!(await this.acceptCode(userId, active, proof.code))) throw validationFailed([{ field: 'code', message: 'code is wrong or expired' }]);
    } else {
      const user = await this.dataSource.getRepository(User).findOne({ where: { id: userId }, select: { id: true, password_hash: true } });
      const right = await this.throttled(userId, async () => (user ? verifyPassword(user.password_hash, proof.password as string) : false));
      if (!right) throw validationFailed([{ field: 'password', message: 'password is wrong' }]);
    }
    await this.dataSource.transaction(async (manager) => {
      await manager.delete(TotpRecoveryCode, { user_id: userId });
      await manager.delete(TotpSecret, { user_id: userId });
    });
  }

  /**
   * The password step of user `userId` passed and the account has two-factor authentication on:
   * a new challenge (32 random bytes, base64url; stored as its SHA-256 for {@link CHALLENGE_TTL_S}).
   * @throws 503 when the store is unavailable.
   */
  async startChallenge(userId: number, kind: SignInKind): Promise<LoginChallengeResponse> {
    const challenge = randomBytes(32).toString('base64url');
    const stored: StoredChallenge = { user_id: userId, kind, created_at: Date.now() };
    await this.store.set(challengeKey(challenge), JSON.stringify(stored), CHALLENGE_TTL_S * 1000);
    return { mfa_required: true, challenge, expires_in: CHALLENGE_TTL_S };
  }

  /**
   * `POST /v1/login-challenges`: checks the second factor (exactly one of `code`, `recovery_code`)
   * for the challenge's user and consumes the challenge; returns its user, kind and when its
   * password was checked. A wrong factor leaves the challenge usable until it expires.
   * @throws 401 `unauthorized` for an unknown, used or expired challenge, or a wrong or replayed
   *   code or recovery code; 422 when neither or both are given; 429 after too many wrong codes.
   */
  async completeChallenge(challenge: string, factor: SecondFactor): Promise<{ userId: number; kind: SignInKind; passwordCheckedAt: number }> {
    if ((factor.code === undefined) === (factor.recovery_code === undefined)) {
      throw validationFailed([{ field: 'code', message: 'give either code or recovery_code' }]);
    }
    const raw = await this.store.get(challengeKey(challenge));
    if (raw === null) throw unauthorized('sign-in challenge unknown, used or expired; sign in again');
    const stored = JSON.parse(raw) as StoredChallenge;
    const active = await this.active(stored.user_id);
    if (!active) throw unauthorized('sign-in challenge unknown, used or expired; sign in again');
    const right =
      factor.code !== undefined
        ? await this.acceptCode(stored.user_id, active, factor.code)
        : await this.useRecoveryCode(stored.user_id, factor.recovery_code as string);
    if (!right) throw unauthorized(factor.code !== undefined ? 'invalid or already used code' : 'invalid or already used recovery code');
    // single use, atomically: of two completions of one challenge, one claims it
    const claim = await this.store.acquire([{ key: `totp-challenge-used:${sha256(challenge)}`, limit: 1, windowMs: CHALLENGE_TTL_S * 1000 }]);
    await this.store.delete(challengeKey(challenge));
    if (!claim.acquired) throw unauthorized('sign-in challenge unknown, used or expired; sign in again');
    return { userId: stored.user_id, kind: stored.kind, passwordCheckedAt: stored.created_at };
  }

  /** The confirmed secret row of user `userId`, or null. */
  private async active(userId: number): Promise<TotpSecret | null> {
    const row = await this.secrets().findOne({ where: { user_id: userId } });
    return row?.enabled_at ? row : null;
  }

  /**
   * Checks `code` against the active secret under the throttle and accepts it only if its time
   * step is after the last accepted one (recorded in the same conditional UPDATE).
   */
  private async acceptCode(userId: number, active: TotpSecret, code: string): Promise<boolean> {
    const cipher = this.cipher;
    if (!cipher) throw new ApiException(503, 'two-factor codes cannot be checked: TOTP_ENCRYPTION_KEY is not configured; use a recovery code');
    return this.throttled(userId, async () => {
      const step = await this.matchingStep(cipher.decrypt(active.secret_encrypted, userId), code);
      if (step === null) return false;
      const accepted = await this.secrets()
        .createQueryBuilder()
        .update()
        .set({ last_step: step })
        .where('user_id = :userId AND enabled_at IS NOT NULL AND (last_step IS NULL OR last_step < :step)', { userId, step })
        .execute();
      return accepted.affected === 1;
    });
  }

  /** Consumes one of the user's recovery codes under the throttle: true when it existed (and is now deleted). */
  private async useRecoveryCode(userId: number, code: string): Promise<boolean> {
    return this.throttled(userId, async () => {
      const deleted = await this.dataSource.getRepository(TotpRecoveryCode).delete({ user_id: userId, code_hash: recoveryHash(userId, code) });
      return deleted.affected === 1;
    });
  }

  /** The time step `code` is valid at for `secret`, within one step of now; null when it is not valid. */
  private async matchingStep(secret: string, code: string): Promise<number | null> {
    const epoch = Math.floor(Date.now() / 1000);
    const result = await verify({ secret, token: code, epoch, epochTolerance: TOLERANCE_S });
    return result.valid ? Math.floor(epoch / PERIOD_S) + result.delta : null;
  }

  /**
   * Runs `check` in a slot of the account's throttle: a `false` or `null` answer keeps the slot (a
   * failure), any other gives it back; an error gives it back too (not the caller's failure) and passes through.
   */
  private async throttled<T>(userId: number, check: () => Promise<T>): Promise<T> {
    await this.throttle.reserve(userId);
    let outcome: T;
    try {
      outcome = await check();
    } catch (error) {
      await this.throttle.giveBack(userId).catch(() => undefined);
      throw error;
    }
    if (outcome !== null && outcome !== false) await this.throttle.giveBack(userId);
    return outcome;
  }

  private enabledCipher(): TotpCipher {
    if (!this.cipher) throw new ApiException(404, 'two-factor authentication is not enabled on this server (TOTP_ENCRYPTION_KEY is not set)');
    return this.cipher;
  }

  private secrets() {
    return this.dataSource.getRepository(TotpSecret);
  }
}

/** A new recovery code: ten random base32 characters, `xxxxx-xxxxx` (50 bits). */
function newRecoveryCode(): string {
  const chars = Array.from({ length: 10 }, () => BASE32[randomInt(32)]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/** How a recovery code is stored: SHA-256 of `<user id>:<code>` with the code lower-cased and without its hyphen. */
function recoveryHash(userId: number, code: string): string {
  return sha256(`${userId}:${code.toLowerCase().replace(/-/g, '')}`);
}

const challengeKey = (challenge: string) => `totp-challenge:${sha256(challenge)}`;
