import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ArticlesModule } from './articles/articles.module.js';
import { AuthModule } from './auth/auth.module.js';
import { CommentsModule } from './comments/comments.module.js';
import { CommonModule } from './common/common.module.js';
import { validateEnv } from './config/env.validation.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { HealthModule } from './health/health.module.js';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { TracingModule } from './observability/tracing/tracing.module.js';
import { MetricsModule } from './observability/metrics/metrics.module.js';
import { OAuthModule } from './oauth/oauth.module.js';
import { OrdersModule } from './orders/orders.module.js';
import { SharedStateModule } from './store/shared-state.module.js';
import { TagsModule } from './tags/tags.module.js';
import { TodosModule } from './todos/todos.module.js';
import { UsersModule } from './users/users.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** The application: configuration, database, the shared state store, the logs, the shared pipeline (with the `Idempotency-Key` replay plugged in), health, auth, the resources, the export of the last spans on shutdown, and the Prometheus metrics. */
@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, validate: validateEnv }),
    DatabaseModule,
    SharedStateModule,
    LoggingModule,
    CommonModule.forRoot({ imports: [IdempotencyModule], interceptors: [IdempotencyInterceptor] }),
    HealthModule,
    AuthModule,
    UsersModule,
    TodosModule,
    TagsModule,
    ArticlesModule,
    CommentsModule,
    OrdersModule,
    OAuthModule,
    TracingModule,
    EventsModule,
    WebhooksModule,
    MetricsModule,
  ],
})
export class AppModule {}
