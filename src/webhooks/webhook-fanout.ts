import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { OutboxListener, StoredEvent } from '../events/event-outbox.js';
import { sqlTime } from './webhook-times.js';
import { WebhookWorker } from './webhook-worker.js';

/**
 * The webhooks' listener on the event outbox (SPEC §11 transactional outbox). Inside the writing
 * transaction, right after the event row, one statement inserts one `pending` delivery (due now)
 * per enabled subscription that lists the event's type (or `*`) and may see the event — its owner
 * is the event's owner, or it is an admin (an event without owner reaches admins only). So a
 * committed change has its deliveries and a rolled-back one has none. After the commit the worker
 * is woken, so the first attempt starts at once rather than at the next poll.
 */
@Injectable()
export class WebhookFanout implements OutboxListener {
  constructor(private readonly worker: WebhookWorker) {}

  /** Inserts the event's deliveries in the writing transaction (`manager`); a failure rolls the write back. */
  async inTransaction(manager: EntityManager, event: StoredEvent): Promise<void> {
    const postgres = manager.connection.options.type === 'postgres';
    const p = (i: number) => (postgres ? `$${i}` : '?');
    const now = sqlTime(postgres, new Date());
    // event types are lower-case letters and dots (EVENT_TYPES): no LIKE wildcard to escape
    await manager.query(
      `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
       SELECT w.id, ${p(1)}, ${p(2)}, 'pending', 0, ${p(3)}, ${p(4)}
       FROM webhook_subscriptions w INNER JOIN users u ON u.id = w.owner_id
       WHERE w.enabled = TRUE AND (w.owner_id = ${p(5)} OR u.role = 'admin') AND (w.events = '["*"]' OR w.events LIKE ${p(6)})`,
      [event.id, event.type, now, now, event.ownerId ?? -1, `%"${event.type}"%`],
    );
  }

  /** Wakes the worker once the transaction committed (never after a rollback). */
  afterCommit(): void {
    this.worker.wake();
  }
}
