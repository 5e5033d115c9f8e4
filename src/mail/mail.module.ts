import { Module } from '@nestjs/common';
import { MailOutbox } from './mail-outbox.js';
import { MailWorker } from './mail-worker.js';

/**
 * Outgoing mail (docs/operations.md#mail): the outbox other modules queue mail in, inside their
 * transactions, and the worker that sends it (started by main.ts once the server listens, for ROLE
 * `all` and `worker`). The outbox's table is the database's own (src/database/data-source.ts).
 */
@Module({
  providers: [MailOutbox, MailWorker],
  exports: [MailOutbox, MailWorker],
})
export class MailModule {}
