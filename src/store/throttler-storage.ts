import { Injectable, Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { SharedStore } from './shared-store.js';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * @nestjs/throttler's storage on the {@link SharedStore}, so the per-API-key rate limit (SPEC §7)
 * is counted once across all instances. Fixed windows (see rate-window.ts): hit `limit + 1` in a
 * window is refused until the block ends. Fails open: when the store is unavailable the request
 * passes uncounted (headers report the full budget) and a warning is logged at most every 5 s —
 * rate limiting protects capacity, and refusing every API-key call during a Redis outage would
 * turn a degraded limiter into an outage. (The throttler would otherwise answer 500.)
 */
@Injectable()
export class SharedThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private lastWarningAt = 0;

  constructor(private readonly store: SharedStore) {}

  /**
   * Counts one hit for `key`; `ttl` and `blockDuration` in milliseconds (as @nestjs/throttler
   * passes them). Returns seconds in `timeToExpire`/`timeToBlockExpire`, as the throttler expects.
   */
  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    try {
      const outcome = await this.store.hit(`rate:${throttlerName}:${key}`, ttl, limit, blockDuration);
      return {
        totalHits: outcome.hits,
        timeToExpire: Math.ceil(outcome.windowMs / 1000),
        isBlocked: outcome.blocked,
        timeToBlockExpire: Math.ceil(outcome.blockMs / 1000),
      };
    } catch (error) {
      if (Date.now() - this.lastWarningAt >= 5000) {
        this.lastWarningAt = Date.now();
        this.logger.warn(`rate limiting is off while the shared store is unavailable (failing open): ${(error as Error).message}`);
      }
      return { totalHits: 0, timeToExpire: Math.ceil(ttl / 1000), isBlocked: false, timeToBlockExpire: 0 };
    }
  }
}
