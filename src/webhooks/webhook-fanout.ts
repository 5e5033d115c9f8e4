import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { FoldedWrite, OutboxListener, StoredEvent } from '../events/event-outbox.js';
import { sqlTime } from './webhook-times.js';
import { NOTIFY_WORKERS_SQL, WEBHOOK_WAKE_CHANNEL } from './webhook-wake.js';
import { WebhookWorker } from './webhook-worker.js';

/**
 * The webhooks' listener on the event outbox (docs/events.md, docs/webhooks.md#delivery). Inside the writing
 * transaction, right after the event row (on PostgreSQL in the same statement as the event row,
 * {@link WebhookFanout.folded}), one statement inserts one `pending` delivery (due now)
 * per enabled subscription that lists the event's type (or `*`) and may see the event — its owner
 * is the event's owner, or it is an admin (an event without owner reaches admins only). So a
 * committed change has its deliveries and a rolled-back one has none. After the commit of a
 * write that made deliveries the worker is woken, so the first attempt starts at once rather than
 * at the next poll (a write no webhook listens to costs no claim transaction): in this process
 * ({@link WebhookWorker.wake}; a no-op where the worker does not run, ROLE=api) and, on PostgreSQL,
 * in every process running the worker: the writing transaction also runs
 * `NOTIFY resource_api_webhooks`, which PostgreSQL delivers to the listeners at its commit and
 * never after a rollback (webhook-wake.ts; docs/operations.md#roles-api-and-worker).
 */
@Injectable()
export class WebhookFanout implements OutboxListener {
  /** The events whose fan-out inserted at least one delivery (held until their transaction ends). */
  private readonly delivered = new WeakSet<StoredEvent>();

  constructor(private readonly worker: WebhookWorker) {}

  /** Inserts the event's deliveries in the writing transaction (`manager`; SQLite, where the outbox does not fold); a failure rolls the write back. */
  async inTransaction(manager: EntityManager, event: StoredEvent): Promise<void> {
    const postgres = manager.connection.options.type === 'postgres';
    const runner = manager.queryRunner;
    if (!runner) throw new Error('WebhookFanout.inTransaction: needs the entity manager of a transaction');
    const params: unknown[] = [];
    const sql = deliveriesSql(event, postgres, (value) => {
      params.push(value);
      return postgres ? `$${params.length}` : '?';
    });
    const inserted = await runner.query(sql, params, true);
    if (!(inserted as { affected?: number }).affected) return;
    this.delivered.add(event);
    // delivered to the LISTENing workers at the commit (several in one transaction are folded into one)
    if (postgres) await runner.query(NOTIFY_WORKERS_SQL);
  }

  /**
   * PostgreSQL: the same INSERT of the deliveries, sent by the outbox in the statement of the
   * event's INSERT, with `NOTIFY resource_api_webhooks` (as `pg_notify`) when it made deliveries.
   */
  folded(event: StoredEvent, param: (value: unknown) => string): FoldedWrite {
    return {
      sql: deliveriesSql(event, true, param),
      notify: WEBHOOK_WAKE_CHANNEL,
      settled: (rows) => {
        if (rows > 0) this.delivered.add(event);
      },
    };
  }

  /** Wakes the worker once a transaction that made deliveries committed (never after a rollback). */
  afterCommit(events: readonly StoredEvent[]): void {
    if (events.some((event) => this.delivered.has(event))) this.worker.wake();
  }
}

/**
 * The INSERT of `event`'s deliveries: one `pending` delivery, due now, per enabled subscription
 * that lists the event's type (or `*`) and may see it (its owner is the event's owner, or an
 * admin); `param` gives the placeholder of each value, in order.
 */
function deliveriesSql(event: StoredEvent, postgres: boolean, param: (value: unknown) => string): string {
  const now = sqlTime(postgres, new Date());
  // event types are lower-case letters and a dot (defineResource refuses others): no LIKE wildcard to escape
  return `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
       SELECT w.id, ${param(event.id)}, ${param(event.type)}, 'pending', 0, ${param(now)}, ${param(now)}
       FROM webhook_subscriptions w INNER JOIN users u ON u.id = w.owner_id
       WHERE w.enabled = TRUE AND (w.owner_id = ${param(event.ownerId ?? -1)} OR u.role = 'admin') AND (w.events = '["*"]' OR w.events LIKE ${param(`%"${event.type}"%`)})`;
}
