import { Injectable } from '@nestjs/common';
import { SharedStore } from '../store/shared-store.js';
import { acquireOrRefuse } from './throttle-slots.js';

/** Failed second-factor attempts (a wrong or replayed code, recovery code or password) allowed per account in {@link TOTP_FAILURE_WINDOW_MS}. */
export const MAX_TOTP_FAILURES_PER_ACCOUNT = 5;
/** The window of {@link MAX_TOTP_FAILURES_PER_ACCOUNT}: 15 minutes. */
export const TOTP_FAILURE_WINDOW_MS = 15 * 60 * 1000;

/**
 * Throttling of two-factor codes (docs/authentication.md#two-factor-authentication-totp): one
 * fixed-window counter per account in the {@link SharedStore} (Redis with REDIS_URL, so the limit
 * holds across instances), a slot taken atomically BEFORE a code is checked, so N concurrent
 * guesses never check more than the limit; a wrong code keeps its slot, a right one gives it
 * back. Counts the sign-in step, the confirmation of an enrolment and turning two-factor off
 * alike (six digits are guessable: 5 guesses in 15 minutes of a million). Fails closed: 503 while
 * the store is unavailable.
 */
@Injectable()
export class TotpThrottle {
  constructor(private readonly store: SharedStore) {}

  /** Takes a slot for one attempt of user `userId`. @throws 429 `rate_limited` with `Retry-After` when the limit is reached; 503 store unavailable. */
  async reserve(userId: number): Promise<void> {
    await acquireOrRefuse(
      this.store,
      [{ key: key(userId), limit: MAX_TOTP_FAILURES_PER_ACCOUNT, windowMs: TOTP_FAILURE_WINDOW_MS }],
      'login',
      'two-factor attempts',
    );
  }

  /** The attempt succeeded, or failed for another reason than a wrong code: its slot goes back. @throws 503 store unavailable. */
  async giveBack(userId: number): Promise<void> {
    await this.store.release(key(userId));
  }
}

const key = (userId: number) => `totp-failures:u:${userId}`;
