import type { HitOutcome } from './rate-window.js';
import type { AcquireOutcome, Slot } from './slots.js';

/**
 * The state several instances must share (docs/operations.md#several-instances-and-redis): rate-limit counters, cookie
 * sessions, the access-token deny list and login-failure counters. One interface, two
 * implementations chosen by one switch (`REDIS_URL`, see {@link SharedStateModule}): in process
 * ({@link MemoryStore}) or in Redis ({@link RedisStore}). Keys are plain strings; values are
 * strings (callers serialise); every entry has a time to live in milliseconds.
 *
 * Errors: the Redis store rejects with a 503 `service_unavailable` ApiException (with
 * `Retry-After`) when Redis cannot answer within REDIS_TIMEOUT_MS; callers that must fail open
 * (rate limiting) catch it, the others let it through (fail closed).
 */
export abstract class SharedStore {
  /** Which implementation this is, for health reports and logs. */
  abstract readonly kind: 'memory' | 'redis';

  /** The value at `key`, or null when absent or expired. */
  abstract get(key: string): Promise<string | null>;

  /** The values at `keys`, in order (null for each absent or expired one), in one round trip. */
  abstract getMany(keys: string[]): Promise<(string | null)[]>;

  /** Stores `value` at `key` for `ttlMs` milliseconds (replacing any value and lifetime). */
  abstract set(key: string, value: string, ttlMs: number): Promise<void>;

  /** Removes the keys (absent ones are ignored). */
  abstract delete(...keys: string[]): Promise<void>;

  /**
   * A fixed-window counter: adds one to `key` (a new counter's window of `windowMs` starts now) and
   * returns the count and the milliseconds until the window ends.
   */
  abstract increment(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }>;

  /** Reads a counter written by {@link increment}: its count and remaining ms, or null when absent. */
  abstract counter(key: string): Promise<{ count: number; ttlMs: number } | null>;

  /** One rate-limited hit, atomically: see `applyHit` in rate-window.ts for the arithmetic. */
  abstract hit(key: string, windowMs: number, limit: number, blockMs: number): Promise<HitOutcome>;

  /**
   * Takes one slot in every counter of `slots`, atomically, or in none when any is full (see
   * `applyAcquire` in slots.ts): the reservation that limits concurrent attempts.
   */
  abstract acquire(slots: Slot[]): Promise<AcquireOutcome>;

  /** Gives one slot back in each counter (never below zero; windows keep their end). */
  abstract release(...keys: string[]): Promise<void>;

  /**
   * Stores max(current value, `value`) at `key`, atomically, for `ttlMs` from now; returns the
   * stored value. For stamps that must only move forward whatever order concurrent writers arrive in.
   */
  abstract raise(key: string, value: number, ttlMs: number): Promise<number>;

  /** Resolves when the store answers; rejects (503) when it does not. For `/health/ready`. */
  abstract ping(): Promise<void>;

  /** Removes every key of this service (tests start from an empty store with it). */
  abstract clear(): Promise<void>;
}
