import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { CommonModule } from './common/common.module.js';
import type { ResourceRegistry } from './common/resources/resource-registry.js';
import { ResourcesModule } from './common/resources/resources.module.js';
import { validateEnv } from './config/env.validation.js';
import { DatabaseModule } from './database/database.module.js';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { TracingModule } from './observability/tracing/tracing.module.js';
import { MetricsModule } from './observability/metrics/metrics.module.js';
import { REGISTRY } from './resources.js';
import { SharedStateModule } from './store/shared-state.module.js';

/**
 * The application: configuration, database, the shared state store, the logs, the shared pipeline
 * (with the `Idempotency-Key` replay plugged in), the export of the last spans on shutdown, the registry handed down (ResourcesModule) and the modules
 * of its declarations (health, auth and the resources, in the registry's module order), and the
 * Prometheus metrics.
 */
@Module({})
export class AppModule {
  /** The application serving `registry`'s resources: the service's ({@link REGISTRY}), or a test's `REGISTRY.with(…)`; loads their modules. */
  static async forRoot(registry: ResourceRegistry = REGISTRY): Promise<DynamicModule> {
    const modules = await registry.loadModules();
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, validate: validateEnv }),
        DatabaseModule,
        SharedStateModule,
        LoggingModule,
        CommonModule.forRoot({ imports: [IdempotencyModule], interceptors: [IdempotencyInterceptor] }),
        // before the resources: its spans are exported after their shutdown hooks ran (Nest runs those of later imports first)
        TracingModule,
        ResourcesModule.forRoot(registry),
        // in the registry's module order: the order of their routes and of the documents' paths
        ...modules,
        MetricsModule,
      ],
    };
  }
}
