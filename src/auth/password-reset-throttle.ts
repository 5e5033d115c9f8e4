import { Injectable } from '@nestjs/common';
import { SharedStore } from '../store/shared-store.js';
import type { Slot } from '../store/slots.js';
import { sha256 } from './hashing.js';
import { acquireOrRefuse } from './throttle-slots.js';

/** Reset requests allowed per hour for one e-mail address, from anywhere (docs/authentication.md#password-reset). */
export const MAX_REQUESTS_PER_EMAIL = 5;
/** Reset requests allowed per hour from one client address, whatever the e-mail addresses. */
export const MAX_REQUESTS_PER_ADDRESS = 20;
/** Failed resets (a wrong, used or expired token) allowed per 15 minutes from one client address. */
export const MAX_FAILED_RESETS_PER_ADDRESS = 10;
const HOUR_MS = 60 * 60 * 1000;
const QUARTER_MS = 15 * 60 * 1000;

/**
 * Throttling of password reset (docs/authentication.md#password-reset), fixed windows in the
 * {@link SharedStore} (Redis with REDIS_URL, so the limits hold across instances), each slot
 * taken before the work: a request counts per e-mail address asked for (so one mailbox is not
 * flooded, and an account's reset links are not) and per client address; a reset counts its
 * failures per client address (a success gives its slot back). The counters never depend on
 * whether the address belongs to an account: a 429 says nothing about it. E-mail addresses are
 * keyed by their SHA-256, never stored. Fails closed: 503 while the store is unavailable.
 */
@Injectable()
export class PasswordResetThrottle {
  constructor(private readonly store: SharedStore) {}

  /**
   * Takes a slot for a reset request for `email` (lower-cased) from `address`.
   * @throws 429 `rate_limited` with `Retry-After` when either limit is reached; 503 when the store is unavailable.
   */
  async reserveRequest(email: string, address: string): Promise<void> {
    await this.acquire([
      { key: `reset-requests:e:${sha256(email)}`, limit: MAX_REQUESTS_PER_EMAIL, windowMs: HOUR_MS },
      { key: `reset-requests:a:${address}`, limit: MAX_REQUESTS_PER_ADDRESS, windowMs: HOUR_MS },
    ]);
  }

  /** Takes a slot for a reset attempt from `address` (given back by {@link resetSucceeded}). @throws 429, 503 as {@link reserveRequest}. */
  async reserveReset(address: string): Promise<void> {
    await this.acquire([{ key: resetKey(address), limit: MAX_FAILED_RESETS_PER_ADDRESS, windowMs: QUARTER_MS }]);
  }

  /** A reset that succeeded gives its slot back. @throws 503 when the store is unavailable. */
  async resetSucceeded(address: string): Promise<void> {
    await this.store.release(resetKey(address));
  }

  private acquire(slots: Slot[]): Promise<void> {
    return acquireOrRefuse(this.store, slots, 'password_reset', 'password reset attempts');
  }
}

const resetKey = (address: string) => `reset-failures:a:${address}`;
