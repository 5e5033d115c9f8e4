import { Injectable } from '@nestjs/common';
import { SharedStore } from '../store/shared-store.js';
import { acquireOrRefuse } from './throttle-slots.js';

/** Verification mails allowed per hour for one account: asked for, or sent at a refused sign-in (docs/authentication.md#e-mail-verification). */
export const MAX_VERIFICATION_MAILS_PER_ACCOUNT = 5;
/** Failed verifications (a wrong, used or expired token) allowed per 15 minutes from one client address. */
export const MAX_FAILED_VERIFICATIONS_PER_ADDRESS = 10;
const HOUR_MS = 60 * 60 * 1000;
const QUARTER_MS = 15 * 60 * 1000;

/**
 * Throttling of e-mail verification (docs/authentication.md#e-mail-verification), fixed windows
 * in the {@link SharedStore} (Redis with REDIS_URL, so the limits hold across instances), each slot
 * taken before the work, as the password-reset throttle's: new verification mails count per
 * account (so one mailbox is not flooded), verifications count their failures per client address
 * (a success gives its slot back). Fails closed: 503 while the store is unavailable.
 */
@Injectable()
export class EmailVerificationThrottle {
  constructor(private readonly store: SharedStore) {}

  /**
   * Takes a slot for a verification mail to user `userId`.
   * @throws 429 `rate_limited` with `Retry-After` when the account's limit is reached; 503 when the store is unavailable.
   */
  async reserveMail(userId: number): Promise<void> {
    await acquireOrRefuse(this.store, [mailSlot(userId)], 'email_verification', 'verification mails');
  }

  /** Takes a slot for a verification mail to user `userId` if one is free: true when taken, false (nothing thrown) when not. @throws 503 when the store is unavailable. */
  async tryReserveMail(userId: number): Promise<boolean> {
    return (await this.store.acquire([mailSlot(userId)])).acquired;
  }

  /** Takes a slot for a verification attempt from `address` (given back by {@link verifySucceeded}). @throws 429, 503 as {@link reserveMail}. */
  async reserveVerify(address: string): Promise<void> {
    await acquireOrRefuse(
      this.store,
      [{ key: verifyKey(address), limit: MAX_FAILED_VERIFICATIONS_PER_ADDRESS, windowMs: QUARTER_MS }],
      'email_verification',
      'e-mail verification attempts',
    );
  }

  /** A verification that succeeded gives its slot back. @throws 503 when the store is unavailable. */
  async verifySucceeded(address: string): Promise<void> {
    await this.store.release(verifyKey(address));
  }
}

const mailSlot = (userId: number) => ({ key: `verify-mails:u:${userId}`, limit: MAX_VERIFICATION_MAILS_PER_ACCOUNT, windowMs: HOUR_MS });
const verifyKey = (address: string) => `verify-failures:a:${address}`;
