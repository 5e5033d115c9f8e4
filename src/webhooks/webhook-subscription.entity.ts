import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { VersionedEntity } from '../database/versioned-entity.js';
import { User } from '../users/user.entity.js';

/** The payload shapes a subscription can choose: the resource as API v1 or v2 shows it. */
export const WEBHOOK_API_VERSIONS = ['1', '2'] as const;
export type WebhookApiVersion = (typeof WEBHOOK_API_VERSIONS)[number];

/**
 * A webhook subscription (docs/webhooks.md): where to POST the events of the listed types that its owner
 * may see, signed with `secret` (and, during a rotation's grace period, `previous_secret` too).
 * Deleted with its owner.
 */
@Entity('webhook_subscriptions')
@Index('idx_webhook_subscriptions_owner_id_id', ['owner_id', 'id'])
@Index('idx_webhook_subscriptions_enabled_owner_id', ['enabled', 'owner_id'])
@Index('idx_webhook_subscriptions_created_at_id', ['created_at', 'id'])
export class WebhookSubscription extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  owner_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id' })
  owner?: Relation<User>;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** JSON array of event types, or `["*"]` for every type. */
  @Column({ type: 'text' })
  events: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ type: 'varchar', length: 8, default: '1' })
  api_version: WebhookApiVersion;

  /** `whsec_` + base64 of 24 random bytes. Never returned after creation or rotation, never logged. */
  @Column({ type: 'varchar', length: 64 })
  secret: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  previous_secret: string | null;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  previous_secret_expires_at: Date | null;

  /** Deliveries in a row that failed after their last attempt; reset by a delivered one. */
  @Column({ type: 'integer', default: 0 })
  consecutive_failures: number;

  @Column({ type: 'varchar', length: 200, nullable: true })
  disabled_reason: string | null;
}
