import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ApiException } from '../common/errors/api-exception.js';

/** Failed logins allowed per window for one username from one client address (SPEC §3). */
export const MAX_FAILURES_PER_USERNAME = 5;
/** Failed logins allowed per window from one client address, whatever the usernames. */
export const MAX_FAILURES_PER_ADDRESS = 100;
/** The window, in milliseconds: 15 minutes. */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;

interface Counter {
  count: number;
  resetAt: number;
}

/**
 * Login throttling (SPEC §3 "Repeated failed logins are throttled"): counts failed password checks
 * in fixed 15-minute windows per (username, address) and per address. A success resets that
 * username's counter for the address (not the address counter), so other users behind a busy
 * address keep logging in below the address limit. Kept in process; the scale-out configuration
 * replaces the provider with a shared store.
 */
@Injectable()
export class LoginThrottle implements OnModuleDestroy {
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  /**
   * Refuses a login attempt while either limit is reached.
   * @throws 429 `rate_limited` with `Retry-After` (seconds until the window ends).
   */
  async assertAllowed(username: string, address: string, now = Date.now()): Promise<void> {
    for (const [key, limit] of [
      [`u:${username}|${address}`, MAX_FAILURES_PER_USERNAME],
      [`a:${address}`, MAX_FAILURES_PER_ADDRESS],
    ] as const) {
      const counter = this.live(key, now);
      if (counter && counter.count >= limit) {
        const retryAfter = Math.max(1, Math.ceil((counter.resetAt - now) / 1000));
        throw new ApiException(429, `too many failed logins; try again in ${retryAfter} s`, undefined, { 'Retry-After': String(retryAfter) });
      }
    }
  }

  /** Counts one failed password check. */
  async recordFailure(username: string, address: string, now = Date.now()): Promise<void> {
    for (const key of [`u:${username}|${address}`, `a:${address}`]) {
      const counter = this.live(key, now);
      if (counter) counter.count += 1;
      else this.counters.set(key, { count: 1, resetAt: now + FAILURE_WINDOW_MS });
    }
  }

  /** A successful login resets that username's counter for the address. */
  async recordSuccess(username: string, address: string): Promise<void> {
    this.counters.delete(`u:${username}|${address}`);
  }

  private live(key: string, now: number): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.resetAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private sweep(now = Date.now()): void {
    for (const [key, counter] of this.counters) if (counter.resetAt <= now) this.counters.delete(key);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}
