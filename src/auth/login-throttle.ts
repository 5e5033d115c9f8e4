import { Injectable } from '@nestjs/common';
import { ApiException } from '../common/errors/api-exception.js';
import { SharedStore } from '../store/shared-store.js';

/** Failed logins allowed per window for one username from one client address (SPEC §3). */
export const MAX_FAILURES_PER_USERNAME = 5;
/** Failed logins allowed per window from one client address, whatever the usernames. */
export const MAX_FAILURES_PER_ADDRESS = 100;
/** The window, in milliseconds: 15 minutes. */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;

/**
 * Login throttling (SPEC §3 "Repeated failed logins are throttled"): counts failed password checks
 * in fixed 15-minute windows per (username, address) and per address. A success resets that
 * username's counter for the address (not the address counter), so other users behind a busy
 * address keep logging in below the address limit. The counters live in the {@link SharedStore}
 * (one budget across instances). Fails closed: with the store unavailable, logins answer 503
 * `service_unavailable` rather than allow unlimited guessing.
 */
@Injectable()
export class LoginThrottle {
  constructor(private readonly store: SharedStore) {}

  /**
   * Refuses a login attempt while either limit is reached.
   * @throws 429 `rate_limited` with `Retry-After` (seconds until the window ends); 503 when the store is unavailable.
   */
  async assertAllowed(username: string, address: string): Promise<void> {
    for (const [key, limit] of [
      [userKey(username, address), MAX_FAILURES_PER_USERNAME],
      [addressKey(address), MAX_FAILURES_PER_ADDRESS],
    ] as const) {
      const counter = await this.store.counter(key);
      if (counter && counter.count >= limit) {
        const retryAfter = Math.max(1, Math.ceil(counter.ttlMs / 1000));
        throw new ApiException(429, `too many failed logins; try again in ${retryAfter} s`, undefined, { 'Retry-After': String(retryAfter) });
      }
    }
  }

  /** Counts one failed password check. @throws 503 when the store is unavailable. */
  async recordFailure(username: string, address: string): Promise<void> {
    await this.store.increment(userKey(username, address), FAILURE_WINDOW_MS);
    await this.store.increment(addressKey(address), FAILURE_WINDOW_MS);
  }

  /** A successful login resets that username's counter for the address. @throws 503 when the store is unavailable. */
  async recordSuccess(username: string, address: string): Promise<void> {
    await this.store.delete(userKey(username, address));
  }
}

const userKey = (username: string, address: string) => `login-failures:u:${username}|${address}`;
const addressKey = (address: string) => `login-failures:a:${address}`;
