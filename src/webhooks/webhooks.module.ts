import { Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Env } from '../config/env.validation.js';
import { EventOutbox } from '../events/event-outbox.js';
import { HealthModule } from '../health/health.module.js';
import { ReadinessChecks } from '../health/readiness-checks.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookFanout } from './webhook-fanout.js';
import { watchOutboxBacklog } from './webhook-metrics.js';
import { WebhookWakeListener } from './webhook-wake.js';
import { WebhookWorker } from './webhook-worker.js';
import { WebhooksController } from './webhooks.controller.js';
import { WEBHOOK_DELIVERIES, WEBHOOKS } from './webhooks.resource.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks (docs/webhooks.md): the subscriptions resource, the outbox listener that turns each committed
 * event into deliveries, the delivery worker and its wake-up listener (both started by main.ts once
 * the server listens, for ROLE `all` and `worker`) and the backlog gauges of /metrics
 * (webhook-metrics.ts). For ROLE=worker the readiness check `webhook_listener` (the LISTEN
 * connection is up) is registered (docs/operations.md#roles-api-and-worker).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...WEBHOOKS.entities, ...WEBHOOK_DELIVERIES.entities]), HealthModule],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhooksService, WebhookWorker, WebhookFanout, WebhookWakeListener],
  exports: [WebhookWorker, WebhookWakeListener],
})
export class WebhooksModule implements OnModuleInit, OnApplicationShutdown {
  private unwatch?: () => void;

  constructor(
    private readonly outbox: EventOutbox,
    private readonly fanout: WebhookFanout,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly readiness: ReadinessChecks,
    private readonly listener: WebhookWakeListener,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /**
   * Registers the fan-out on the outbox, so every event appended from now on gets its deliveries;
   * the backlog gauges read this database; a worker's readiness includes its LISTEN connection.
   */
  onModuleInit(): void {
    this.outbox.addListener(this.fanout);
    this.unwatch = watchOutboxBacklog(this.dataSource);
    if (this.config.get('ROLE', { infer: true }) === 'worker') this.readiness.register('webhook_listener', () => this.listener.probe());
  }

  onApplicationShutdown(): void {
    this.unwatch?.();
  }
}
