import { Injectable } from '@nestjs/common';
import { ApiException } from '../common/errors/api-exception.js';
import { countRefusal } from '../observability/metrics/registry.js';
import { SharedStore } from '../store/shared-store.js';
import type { Slot } from '../store/slots.js';

/** Failed logins allowed per window for one username from one client address (docs/authentication.md#login-throttling). */
export const MAX_FAILURES_PER_USERNAME = 5;
/** Failed logins allowed per window from one client address, whatever the usernames. */
export const MAX_FAILURES_PER_ADDRESS = 100;
/** The window of the two limits above, in milliseconds: 15 minutes. */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Failed logins allowed per hour for one account (username) from all addresses together (OWASP ASVS V2.2.1). */
export const MAX_FAILURES_PER_ACCOUNT = 100;
/** The window of the per-account limit, in milliseconds: one hour. */
export const ACCOUNT_WINDOW_MS = 60 * 60 * 1000;

/**
 * Login throttling (docs/authentication.md#login-throttling: repeated failed logins are throttled, and a
 * slot is taken before the password is checked). Three fixed-window counters: per (username, address) 5 in 15 minutes,
 * per address 100 in 15 minutes, per account (username, from anywhere) 100 in an hour. Every
 * attempt first RESERVES a slot in all three at once, atomically in the {@link SharedStore}, so N
 * concurrent attempts run at most as many password checks as the limits allow; the reserved slot
 * is the failure. A success gives its slots back: the (username, address) counter is reset, the
 * address and account counters drop by one, so other users behind a busy address keep logging in.
 * Fails closed: with the store unavailable, logins answer 503 `service_unavailable` rather than
 * allow unlimited guessing.
 */
@Injectable()
export class LoginThrottle {
  constructor(private readonly store: SharedStore) {}

  /**
   * Reserves this attempt's slot before the password is checked.
   * @throws 429 `rate_limited` with `Retry-After` (seconds until a full counter's window ends)
   *   when any limit is reached (nothing is counted then); 503 when the store is unavailable.
   */
  async reserve(username: string, address: string): Promise<void> {
    const outcome = await this.store.acquire(slots(username, address));
    if (!outcome.acquired) {
      countRefusal('login');
      const retryAfter = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
      throw new ApiException(429, `too many failed logins; try again in ${retryAfter} s`, undefined, { 'Retry-After': String(retryAfter) });
    }
  }

  /** A successful login: resets the username's counter for the address and gives back the address and account slots. @throws 503 when the store is unavailable. */
  async recordSuccess(username: string, address: string): Promise<void> {
    await this.store.delete(userKey(username, address));
    await this.store.release(addressKey(address), accountKey(username));
  }

  /** An attempt that ended neither in success nor in a wrong password (e.g. the database failed): every slot goes back. */
  async cancel(username: string, address: string): Promise<void> {
    await this.store.release(...slots(username, address).map((slot) => slot.key));
  }
}

/** The three counters one attempt reserves a slot in. */
function slots(username: string, address: string): Slot[] {
  return [
    { key: userKey(username, address), limit: MAX_FAILURES_PER_USERNAME, windowMs: FAILURE_WINDOW_MS },
    { key: addressKey(address), limit: MAX_FAILURES_PER_ADDRESS, windowMs: FAILURE_WINDOW_MS },
    { key: accountKey(username), limit: MAX_FAILURES_PER_ACCOUNT, windowMs: ACCOUNT_WINDOW_MS },
  ];
}

const userKey = (username: string, address: string) => `login-failures:u:${username}|${address}`;
const addressKey = (address: string) => `login-failures:a:${address}`;
const accountKey = (username: string) => `login-failures:acct:${username}`;
