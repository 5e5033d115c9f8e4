import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventOutbox } from '../events/event-outbox.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookFanout } from './webhook-fanout.js';
import { WebhookWorker } from './webhook-worker.js';
import { WebhooksController } from './webhooks.controller.js';
import { WEBHOOK_DELIVERIES, WEBHOOKS } from './webhooks.resource.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks (SPEC §11): the subscriptions resource, the outbox listener that turns each committed
 * event into deliveries, and the delivery worker (started by main.ts once the server listens).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...WEBHOOKS.entities, ...WEBHOOK_DELIVERIES.entities])],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhooksService, WebhookWorker, WebhookFanout],
  exports: [WebhookWorker],
})
export class WebhooksModule implements OnModuleInit {
  constructor(
    private readonly outbox: EventOutbox,
    private readonly fanout: WebhookFanout,
  ) {}

  /** Registers the fan-out on the outbox, so every event appended from now on gets its deliveries. */
  onModuleInit(): void {
    this.outbox.addListener(this.fanout);
  }
}
