import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { EventRecord } from '../events/event.entity.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';

/**
 * Delivery statuses: `pending` (an attempt is due at `next_attempt_at`), `delivering` (claimed by a
 * worker until `lease_expires_at`), `delivered` (a 2xx), `failed` (410, or every attempt used).
 */
export const DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One event to send to one subscription, with its attempts (docs/webhooks.md#delivery). A redelivery is a new row
 * for the same event, so its `webhook-id` (the event id) is the same. Goes with its subscription
 * and with its event.
 */
@Entity('webhook_deliveries')
@Index('idx_webhook_deliveries_status_next_attempt_at', ['status', 'next_attempt_at'])
@Index('idx_webhook_deliveries_subscription_id_id', ['subscription_id', 'id'])
@Index('idx_webhook_deliveries_subscription_id_status_id', ['subscription_id', 'status', 'id'])
@Index('idx_webhook_deliveries_subscription_id_created_at_id', ['subscription_id', 'created_at', 'id'])
@Index('idx_webhook_deliveries_event_id', ['event_id'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  subscription_id: number;

  @ManyToOne(() => WebhookSubscription, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'subscription_id' })
  subscription?: Relation<WebhookSubscription>;

  /** The event's public id (`evt_…`), also the `webhook-id` header of every attempt. */
  @Column({ type: 'varchar', length: 40 })
  event_id: string;

  @ManyToOne(() => EventRecord, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', referencedColumnName: 'event_id' })
  event?: Relation<EventRecord>;

  @Column({ type: 'varchar', length: 64 })
  event_type: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  /** Attempts started so far. */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** When the next attempt is due (pending); the lease's end while delivering (so one index finds both); null when done. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  next_attempt_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  lease_expires_at: Date | null;

  /** Random token of the claim that holds the lease: completion is conditional on it. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim_token: string | null;

  @Column({ type: 'integer', nullable: true })
  last_status_code: number | null;

  /** Short reason of the last failure (`timeout`, `connection refused`, `HTTP 500`…); no secrets, no response bodies. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  last_error: string | null;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  last_attempt_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  delivered_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
