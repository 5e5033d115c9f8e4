import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';

/**
 * One row of the event log, the transactional outbox (docs/events.md): written in the same
 * transaction as the change it describes, so a committed change always has its event and a
 * rolled-back one never does. No foreign keys: an event outlives what it names. Pruned after
 * `EVENT_RETENTION_DAYS`.
 */
@Entity('events')
@Index('idx_events_created_at_id', ['created_at', 'id'])
@Index('idx_events_owner_id_created_at_id', ['owner_id', 'created_at', 'id'])
@Index('idx_events_owner_id_id', ['owner_id', 'id'])
@Index('idx_events_type_created_at_id', ['type', 'created_at', 'id'])
export class EventRecord {
  /** The position: the order events were inserted in. */
  @PrimaryGeneratedColumn()
  id: number;

  /** The public id, `evt_` + 32 hex digits; also the `webhook-id` of its deliveries. */
  @Column({ type: 'varchar', length: 40, unique: true })
  event_id: string;

  /** An event type of the registry's (`EventType` names the service's own; a typed column here would make the declarations' type refer to itself). */
  @Column({ type: 'varchar', length: 64 })
  type: string;

  /** The user the event belongs to (who may see it besides admins); null: admins only. */
  @Column({ type: 'integer', nullable: true })
  owner_id: number | null;

  /** The id of the resource the event is about. */
  @Column({ type: 'integer', nullable: true })
  resource_id: number | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  /** The resource as `GET /v1/…` showed it, JSON. */
  @Column({ type: 'text' })
  data_v1: string;

  /** The resource as `GET /v2/…` showed it, JSON. */
  @Column({ type: 'text' })
  data_v2: string;

  /** W3C `traceparent` of the span that wrote the event (null: tracing off); its deliveries continue that trace. Never shown by the API. */
  @Column({ type: 'varchar', length: 55, nullable: true })
  traceparent: string | null;
}
