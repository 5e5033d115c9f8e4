import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
import { ApiException, validationFailed } from '../common/errors/api-exception.js';
import { appUrlOf, type Env } from '../config/env.validation.js';
import { insertRow } from '../database/insert-row.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import { UsersService } from '../users/users.service.js';
import type { PasswordResetRequestAccepted } from './dto/password-reset.dto.js';
import { sha256 } from './hashing.js';
import { PasswordResetThrottle } from './password-reset-throttle.js';
import { PasswordResetToken } from './password-reset-token.entity.js';

/** The one answer to a reset request, whether or not an account has the address. */
export const RESET_REQUEST_MESSAGE = 'If an account has this e-mail address, a link to reset its password is on its way.';

/** The refusal of a token that is unknown, used, expired, or whose user's password changed since. */
export const INVALID_TOKEN_MESSAGE = 'token is invalid, already used or expired';

/** A new token for a mailed link (password reset, e-mail verification): 32 random bytes, base64url (43 characters), and its SHA-256 hex, the only form stored. */
export function newMailToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256(token) };
}

/** The mail's link: `<APP_URL>/reset-password#token=<token>` (in the fragment, which browsers never send to a server or in a Referer). */
export function resetLink(appUrl: string, token: string): string {
  return `${appUrl}/reset-password#token=${encodeURIComponent(token)}`;
}

/**
 * Password reset by mail (docs/authentication.md#password-reset). A request for an address finds
 * its account, if any, and queues a mail with a one-time link in the same transaction as the
 * token's row; the answer is the same 202 either way, after the same work (a token drawn and
 * hashed, the account looked up, a transaction), so it tells nothing about the address. A reset
 * consumes the token (deleted in the password change's transaction) and sets the password as a
 * password change does: every access token, refresh token, session and other reset token of the
 * account ends.
 */
@Injectable()
export class PasswordResetsService {
  private readonly ttlMs: number;
  private readonly appUrl: string | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly outbox: MailOutbox,
    private readonly throttle: PasswordResetThrottle,
    config: ConfigService<Env, true>,
  ) {
    this.ttlMs = config.get('PASSWORD_RESET_TTL', { infer: true }) * 1000;
    this.appUrl = appUrlOf({
      APP_URL: config.get('APP_URL', { infer: true }),
      NODE_ENV: config.get('NODE_ENV', { infer: true }),
      PORT: config.get('PORT', { infer: true }),
    });
  }

  /**
   * `POST /v1/password-reset-requests`: when an account has `email` (and did not change to it
   * after registration without verifying it since: UsersService.findIdForPasswordReset), stores a new token (hashed)
   * and queues the mail with its link, both in one transaction, then wakes the mail worker.
   * @throws 404 when password reset is off (production without APP_URL); 429 (throttled per
   *   e-mail address and per client `address`, whatever the account); 503 when the database or the store is unavailable.
   */
  async request(email: string, address: string): Promise<PasswordResetRequestAccepted> {
    const appUrl = this.enabled();
    const normalised = email.toLowerCase();
    await this.throttle.reserveRequest(normalised, address);
    const { token, hash } = newMailToken();
    const userId = await this.users.findIdForPasswordReset(normalised);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    await this.dataSource.transaction(async (manager) => {
      if (userId === null) {
        // the same kind of work as the other path: a look-up of the hash on the tokens' unique index
        await manager.exists(PasswordResetToken, { where: { token_hash: hash } });
        return;
      }
      await insertRow(manager.getRepository(PasswordResetToken), { token_hash: hash, user_id: userId, expires_at: expiresAt, created_at: now });
      await this.outbox.enqueue(manager, {
        to: normalised,
        subject: 'Reset your password',
        text: resetMailText(resetLink(appUrl, token), Math.max(1, Math.round(this.ttlMs / 60_000))),
        discardAfter: expiresAt,
      });
    });
    if (userId !== null) this.outbox.wake();
    return { message: RESET_REQUEST_MESSAGE, expires_in: this.ttlMs / 1000 };
  }

  /**
   * `POST /v1/password-resets`: sets the password of the token's account and consumes the token.
   * @throws 404 when password reset is off; 422 `validation_failed` on `token` when it is unknown,
   *   used, expired or its account's password changed since; 429 after too many failures from the
   *   client `address`; 503 when the database or the store is unavailable.
   */
  async reset(token: string, password: string, address: string): Promise<void> {
    this.enabled();
    await this.throttle.reserveReset(address);
    const hash = sha256(token);
    const found = await this.dataSource.getRepository(PasswordResetToken).findOne({
      where: { token_hash: hash, expires_at: MoreThan(new Date()) },
      select: { id: true, user_id: true },
    });
    if (!found) throw invalidToken();
    await this.users.setPassword(found.user_id, password, async (manager) => {
      // single use: of two resets with one token, one deletes it and the other is refused
      const result = await manager.delete(PasswordResetToken, { id: found.id, token_hash: hash });
      if (!result.affected) throw invalidToken();
    });
    await this.throttle.resetSucceeded(address);
  }

  /** APP_URL, when password reset is on. @throws 404 when it is off (production without APP_URL). */
  private enabled(): string {
    if (this.appUrl === undefined) throw new ApiException(404, 'password reset is not enabled on this server');
    return this.appUrl;
  }
}

/** The 422 of a token that does not work (the same for every reason). */
function invalidToken() {
  return validationFailed([{ field: 'token', message: INVALID_TOKEN_MESSAGE }]);
}

/** The mail's text part: the link, how long it works, and what to do when the reset was not asked for. */
export function resetMailText(link: string, minutes: number): string {
  return [
    'Someone asked to reset the password of your account.',
    '',
    `To choose a new password, open this link within ${minutes} minutes:`,
    '',
    link,
    '',
    'The link works once. If you did not ask for it, ignore this mail: your password stays as it is.',
    '',
  ].join('\n');
}
