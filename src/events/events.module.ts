import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventOutbox } from './event-outbox.js';
import { EventRetention } from './event-retention.js';
import { EventsController } from './events.controller.js';
import { EVENTS } from './events.resource.js';
import { EventsService } from './events.service.js';

/**
 * The event log and transactional outbox (docs/events.md). Global: every resource service appends
 * its events through {@link EventOutbox} in its write transaction.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([...EVENTS.entities])],
  controllers: [EventsController],
  providers: [EventOutbox, EventsService, EventRetention],
  exports: [EventOutbox],
})
export class EventsModule {}
