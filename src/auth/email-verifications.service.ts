import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, MoreThan } from 'typeorm';
import { ApiException, conflict, validationFailed } from '../common/errors/api-exception.js';
import { appUrlOf, type Env } from '../config/env.validation.js';
import { insertRow } from '../database/insert-row.js';
import { MailOutbox } from '../mail/mail-outbox.js';
import type { UserChange } from '../users/user-lifecycle.js';
import { UsersService } from '../users/users.service.js';
import type { EmailVerificationRequestAccepted } from './dto/email-verification.dto.js';
import { EmailVerificationThrottle } from './email-verification-throttle.js';
import { EmailVerificationToken } from './email-verification-token.entity.js';
import { sha256 } from './hashing.js';
import { INVALID_TOKEN_MESSAGE, newMailToken } from './password-resets.service.js';

/** The answer to a request for a new verification mail. */
export const VERIFICATION_REQUEST_MESSAGE = 'A link to verify your e-mail address is on its way.';

/** The mail's link: `<APP_URL>/verify-email#token=<token>` (in the fragment, which browsers never send to a server or in a Referer). */
export function verificationLink(appUrl: string, token: string): string {
  return `${appUrl}/verify-email#token=${encodeURIComponent(token)}`;
}

/** The mail's text part: the link, how long it works, and what to do when the address was not given. */
export function verificationMailText(link: string, hours: number): string {
  return [
    'This address was given for an account. To confirm that it is yours,',
    `open this link within ${hours} ${hours === 1 ? 'hour' : 'hours'}:`,
    '',
    link,
    '',
    'The link works once. If you did not give this address, ignore this mail.',
    '',
  ].join('\n');
}

/**
 * E-mail verification (docs/authentication.md#e-mail-verification). When a user's address is set
 * (registration, a PUT or PATCH: the `user.email_changed` lifecycle event), {@link onEmailChanged}
 * runs in that transaction: the user's earlier verification and password-reset tokens are deleted
 * and, for a new address, a token (stored as its SHA-256) and the mail with its one-time link are
 * written. {@link verify} consumes a token and sets `email_verified_at`; {@link request} sends a new
 * link to the caller's current address. Off (404, and no mail) in production without APP_URL.
 */
@Injectable()
export class EmailVerificationsService {
  private readonly ttlMs: number;
  private readonly appUrl: string | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly outbox: MailOutbox,
    private readonly throttle: EmailVerificationThrottle,
    config: ConfigService<Env, true>,
  ) {
    this.ttlMs = config.get('EMAIL_VERIFICATION_TTL', { infer: true }) * 1000;
    this.appUrl = appUrlOf({
      APP_URL: config.get('APP_URL', { infer: true }),
      NODE_ENV: config.get('NODE_ENV', { infer: true }),
      PORT: config.get('PORT', { infer: true }),
    });
  }

  /**
   * The `user.email_changed` reaction, inside the change's transaction (`change.manager`): deletes
   * the user's verification tokens and, when there is a new address and verification is on, writes
   * a new token and queues its mail. The caller wakes the mail worker once committed ({@link wake}).
   */
  async onEmailChanged({ manager, userId, email }: UserChange): Promise<void> {
    await manager.delete(EmailVerificationToken, { user_id: userId });
    if (email && this.appUrl !== undefined) await this.queue(manager, userId, email);
  }

  /** Tells this process's mail worker that a verification mail was committed. */
  wake(): void {
    this.outbox.wake();
  }

  /**
   * `POST /v1/email-verifications`: sets `email_verified_at` of the token's user, if the user still
   * has the address the token was mailed to, and deletes every verification token of the user.
   * @throws 404 when verification is off (production without APP_URL); 422 `validation_failed` on
   *   `token` when it is unknown, used or expired (the password reset's answer); 429 after too many
   *   failures from the client `address`; 503 when the database or the store is unavailable.
   */
  async verify(token: string, address: string): Promise<void> {
    this.enabled();
    await this.throttle.reserveVerify(address);
    const hash = sha256(token);
    const found = await this.dataSource.getRepository(EmailVerificationToken).findOne({
      where: { token_hash: hash, expires_at: MoreThan(new Date()) },
      select: { id: true, user_id: true, email: true },
    });
    if (!found) throw invalidToken();
    await this.users.markEmailVerified(
      found.user_id,
      found.email,
      async (manager) => {
        // single use: of two verifications with one token, one deletes it and the other is refused
        const result = await manager.delete(EmailVerificationToken, { id: found.id, token_hash: hash });
        if (!result.affected) throw invalidToken();
        await manager.delete(EmailVerificationToken, { user_id: found.user_id });
      },
      invalidToken,
    );
    await this.throttle.verifySucceeded(address);
  }

  /**
   * `POST /v1/email-verification-requests`: a new link to user `userId`'s current address; the
   * earlier links stop working.
   * @throws 404 when verification is off; 409 `conflict` when the account has no address or it is
   *   verified already; 429 after MAX_VERIFICATION_MAILS_PER_ACCOUNT mails in an hour; 503 when the
   *   database or the store is unavailable.
   */
  async request(userId: number): Promise<EmailVerificationRequestAccepted> {
    this.enabled();
    const { email, email_verified_at: verifiedAt } = await this.users.emailState(userId);
    if (email === null) throw conflict('the account has no e-mail address to verify; set one with PATCH /users/{id}');
    if (verifiedAt !== null) throw conflict('the e-mail address of the account is verified already');
    await this.throttle.reserveMail(userId);
    await this.resend(userId, email);
    return { message: VERIFICATION_REQUEST_MESSAGE, expires_in: this.ttlMs / 1000 };
  }

  /**
   * A password sign-in refused for an unverified address (REQUIRE_VERIFIED_EMAIL): sends a new link
   * to `email` when the account's mail throttle has a slot, silently nothing otherwise, so that a
   * user whose link expired is never locked out. @throws 503 when the database or the store is unavailable.
   */
  async resendAtSignIn(userId: number, email: string): Promise<void> {
    if (this.appUrl === undefined || !(await this.throttle.tryReserveMail(userId))) return;
    await this.resend(userId, email);
  }

  /** Replaces the user's verification tokens with a new one and queues its mail, in one transaction; wakes the worker once committed. */
  private async resend(userId: number, email: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.delete(EmailVerificationToken, { user_id: userId });
      await this.queue(manager, userId, email);
    });
    this.outbox.wake();
  }

  /** Writes a new token for `email` and queues its mail with `manager` (in an active transaction). */
  private async queue(manager: EntityManager, userId: number, email: string): Promise<void> {
    const appUrl = this.enabled();
    const { token, hash } = newMailToken();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.ttlMs);
    await insertRow(manager.getRepository(EmailVerificationToken), { token_hash: hash, user_id: userId, email, expires_at: expiresAt, created_at: now });
    await this.outbox.enqueue(manager, {
      to: email,
      subject: 'Verify your e-mail address',
      text: verificationMailText(verificationLink(appUrl, token), Math.max(1, Math.round(this.ttlMs / 3_600_000))),
      discardAfter: expiresAt,
    });
  }

  /** APP_URL, when verification is on. @throws 404 when it is off (production without APP_URL). */
  private enabled(): string {
    if (this.appUrl === undefined) throw new ApiException(404, 'e-mail verification is not enabled on this server');
    return this.appUrl;
  }
}

/** The 422 of a token that does not work (the same for every reason, as a password reset's). */
function invalidToken() {
  return validationFailed([{ field: 'token', message: INVALID_TOKEN_MESSAGE }]);
}
