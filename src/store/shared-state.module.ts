import { Global, Module, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env.validation.js';
import { TokenDenyList } from '../auth/deny-list.js';
import { HealthModule } from '../health/health.module.js';
import { ReadinessChecks } from '../health/readiness-checks.js';
import { MemoryStore } from './memory-store.js';
import { SharedStore } from './shared-store.js';

/**
 * Provides the {@link SharedStore} everywhere (docs/operations.md#several-instances-and-redis): {@link RedisStore} when
 * `REDIS_URL` is set (start-up fails with one line when Redis is unreachable), else
 * {@link MemoryStore}. This is the one switch; the deny list, login throttle, session store and
 * the request-rate limiter only ever see `SharedStore`. With Redis, readiness (`GET /health/ready`)
 * checks it too. Also provides the {@link TokenDenyList}
 * globally: the auth strategies read it and deleting a user (UsersModule) writes it.
 */
@Global()
@Module({
  imports: [HealthModule],
  providers: [
    {
      provide: SharedStore,
      inject: [ConfigService],
      useFactory: async (config: ConfigService<Env, true>): Promise<SharedStore> => {
        const url = config.get('REDIS_URL', { infer: true });
        if (!url) return new MemoryStore();
        // loaded only when used: ioredis is some forty modules a single instance never needs at start-up
        const { RedisStore } = await import('./redis-store.js');
        return RedisStore.connect(url, config.get('REDIS_TIMEOUT_MS', { infer: true }));
      },
    },
    TokenDenyList,
  ],
  exports: [SharedStore, TokenDenyList],
})
export class SharedStateModule implements OnModuleInit {
  constructor(
    private readonly store: SharedStore,
    private readonly readiness: ReadinessChecks,
  ) {}

  /** With Redis, `GET /health/ready` checks it too (503 naming `redis` when it does not answer). */
  onModuleInit(): void {
    if (this.store.kind === 'redis') this.readiness.register('redis', () => this.store.ping());
  }
}
