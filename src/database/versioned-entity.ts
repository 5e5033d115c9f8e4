import { Column, VersionColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';

/**
 * The columns every versioned resource's entity shares, declared once: extend it
 * (`export class Thing extends VersionedEntity`) and the entity gets `created_at`, `updated_at`
 * (timestamps, UTC; the services set both) and `version`. A migration creates them as
 * `created_at`/`updated_at` of the database's timestamp type, NOT NULL, and
 * `version integer NOT NULL DEFAULT 1`.
 *
 * `version` is 1 on insert and incremented by every UPDATE of the row (TypeORM's query builder adds
 * `version = version + 1`) and by the writes that change what its representation embeds: the source
 * of the resource's entity tag and the condition of `If-Match` writes
 * (docs/writes.md#conditional-requests-etag-if-none-match-if-match).
 */
export abstract class VersionedEntity {
  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  updated_at: Date;

  @VersionColumn({ type: 'integer', default: 1 })
  version: number;
}
