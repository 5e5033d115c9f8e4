import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { ApiException } from '../common/errors/api-exception.js';
import { countRedisConnectionError, countRedisFailure } from '../observability/metrics/registry.js';
import { HIT_SCRIPT, type HitOutcome } from './rate-window.js';
import { SharedStore } from './shared-store.js';
import { ACQUIRE_SCRIPT, type AcquireOutcome, RAISE_SCRIPT, RELEASE_SCRIPT, type Slot } from './slots.js';

/** Every key this service writes starts with this, so one Redis can serve other applications too. */
export const KEY_PREFIX = 'resource-api:';

/** Seconds a client is told to wait (`Retry-After`) when Redis does not answer. */
export const STORE_RETRY_AFTER_SECONDS = 5;

interface WithHitCommand {
  rateHit(hitsKey: string, blockKey: string, windowMs: number, limit: number, blockMs: number): Promise<[number, number, number, number]>;
  acquireSlots(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<[number, number]>;
  releaseSlots(numberOfKeys: number, ...keys: string[]): Promise<number>;
  raiseValue(key: string, value: number, ttlMs: number): Promise<string>;
}

/**
 * {@link SharedStore} in Redis (ioredis), used when `REDIS_URL` is set: every instance pointed at
 * the same Redis shares counters, sessions and the deny list (docs/operations.md#several-instances-and-redis). Commands never queue
 * while Redis is away (`enableOfflineQueue: false`) and time out after REDIS_TIMEOUT_MS, so a Redis
 * outage turns into a prompt 503 `service_unavailable` with `Retry-After` instead of a hanging
 * request; ioredis reconnects in the background (at most every second) and the same process
 * serves again once Redis is back.
 */
export class RedisStore extends SharedStore implements OnApplicationShutdown {
  readonly kind = 'redis' as const;
  private readonly logger = new Logger(RedisStore.name);
  private lastWarningAt = 0;

  private constructor(private readonly redis: Redis & WithHitCommand) {
    super();
  }

  /**
   * Connects to `url` (`redis://[user:password@]host:port[/db]` or `rediss://` for TLS) with
   * commands timing out after `timeoutMs`.
   * @throws Error with a one-line message when Redis cannot be reached at start-up.
   */
  static async connect(url: string, timeoutMs: number): Promise<RedisStore> {
    const redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectTimeout: Math.max(timeoutMs, 1000),
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    });
    redis.defineCommand('rateHit', { numberOfKeys: 2, lua: HIT_SCRIPT });
    // numberOfKeys omitted: the key count is the first argument of each call
    redis.defineCommand('acquireSlots', { lua: ACQUIRE_SCRIPT });
    redis.defineCommand('releaseSlots', { lua: RELEASE_SCRIPT });
    redis.defineCommand('raiseValue', { numberOfKeys: 1, lua: RAISE_SCRIPT });
    // without a listener, ioredis reports every failed reconnection as an unhandled 'error' event
    redis.on('error', countRedisConnectionError);
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      throw new Error(`Redis at REDIS_URL is unreachable: ${(error as Error).message}`, { cause: error });
    }
    return new RedisStore(redis as Redis & WithHitCommand);
  }

  async get(key: string): Promise<string | null> {
    return this.run(() => this.redis.get(KEY_PREFIX + key));
  }

  async getMany(keys: string[]): Promise<(string | null)[]> {
    if (keys.length === 0) return [];
    return this.run(() => this.redis.mget(...keys.map((key) => KEY_PREFIX + key)));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const ms = Math.max(1, Math.round(ttlMs));
    await this.run(() => this.redis.set(KEY_PREFIX + key, value, 'PX', ms));
  }

  async delete(...keys: string[]): Promise<void> {
    if (keys.length > 0) await this.run(() => this.redis.del(...keys.map((key) => KEY_PREFIX + key)));
  }

  async increment(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }> {
    const [[, count], [, ttl]] = (await this.run(() =>
      this.redis
        .multi()
        .incr(KEY_PREFIX + key)
        .pttl(KEY_PREFIX + key)
        .exec(),
    )) as [[null, number], [null, number]];
    if (ttl < 0) {
      await this.run(() => this.redis.pexpire(KEY_PREFIX + key, windowMs));
      return { count, ttlMs: windowMs };
    }
    return { count, ttlMs: ttl };
  }

  async counter(key: string): Promise<{ count: number; ttlMs: number } | null> {
    const [[, value], [, ttl]] = (await this.run(() =>
      this.redis
        .multi()
        .get(KEY_PREFIX + key)
        .pttl(KEY_PREFIX + key)
        .exec(),
    )) as [[null, string | null], [null, number]];
    return value === null ? null : { count: Number(value), ttlMs: Math.max(0, ttl) };
  }

  async hit(key: string, windowMs: number, limit: number, blockMs: number): Promise<HitOutcome> {
    const [hits, windowTtl, blocked, blockTtl] = await this.run(() =>
      this.redis.rateHit(`${KEY_PREFIX}hits:${key}`, `${KEY_PREFIX}block:${key}`, windowMs, limit, blockMs),
    );
    return { hits, windowMs: windowTtl, blocked: blocked === 1, blockMs: blockTtl };
  }

  async acquire(slots: Slot[]): Promise<AcquireOutcome> {
    if (slots.length === 0) return { acquired: true };
    const args = slots.flatMap((slot) => [slot.limit, Math.max(1, Math.round(slot.windowMs))]);
    const [acquired, retryAfterMs] = await this.run(() => this.redis.acquireSlots(slots.length, ...slots.map((slot) => KEY_PREFIX + slot.key), ...args));
    return acquired === 1 ? { acquired: true } : { acquired: false, retryAfterMs };
  }

  async release(...keys: string[]): Promise<void> {
    if (keys.length > 0) await this.run(() => this.redis.releaseSlots(keys.length, ...keys.map((key) => KEY_PREFIX + key)));
  }

  async raise(key: string, value: number, ttlMs: number): Promise<number> {
    return Number(await this.run(() => this.redis.raiseValue(KEY_PREFIX + key, Math.round(value), Math.max(1, Math.round(ttlMs)))));
  }

  async ping(): Promise<void> {
    await this.run(() => this.redis.ping());
  }

  async clear(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.run(() => this.redis.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 500));
      if (keys.length > 0) await this.run(() => this.redis.del(...keys));
      cursor = next;
    } while (cursor !== '0');
  }

  /** Closes the connection (waits for pending replies when connected). */
  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  /** Runs a command; a connection or timeout error becomes 503 `service_unavailable` with `Retry-After`. */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      countRedisFailure();
      // one warning per 5 s is enough to see an outage without flooding the log
      if (Date.now() - this.lastWarningAt >= 5000) {
        this.lastWarningAt = Date.now();
        this.logger.warn(`Redis unavailable: ${(error as Error).message}`);
      }
      throw new ApiException(503, 'the shared state store (Redis) is unavailable; try again later', undefined, {
        'Retry-After': String(STORE_RETRY_AFTER_SECONDS),
      });
    }
  }
}
