import { Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { EventOutbox } from '../events/event-outbox.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookFanout } from './webhook-fanout.js';
import { watchOutboxBacklog } from './webhook-metrics.js';
import { WebhookWorker } from './webhook-worker.js';
import { WebhooksController } from './webhooks.controller.js';
import { WEBHOOK_DELIVERIES, WEBHOOKS } from './webhooks.resource.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks (SPEC §11): the subscriptions resource, the outbox listener that turns each committed
 * event into deliveries, the delivery worker (started by main.ts once the server listens) and the
 * backlog gauges of /metrics (webhook-metrics.ts).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...WEBHOOKS.entities, ...WEBHOOK_DELIVERIES.entities])],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhooksService, WebhookWorker, WebhookFanout],
  exports: [WebhookWorker],
})
export class WebhooksModule implements OnModuleInit, OnApplicationShutdown {
  private unwatch?: () => void;

  constructor(
    private readonly outbox: EventOutbox,
    private readonly fanout: WebhookFanout,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Registers the fan-out on the outbox, so every event appended from now on gets its deliveries; the backlog gauges read this database. */
  onModuleInit(): void {
    this.outbox.addListener(this.fanout);
    this.unwatch = watchOutboxBacklog(this.dataSource);
  }

  onApplicationShutdown(): void {
    this.unwatch?.();
  }
}
