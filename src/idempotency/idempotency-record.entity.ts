import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';

/**
 * The record of a keyed request (docs/writes.md#retrying-safely-idempotency-key), written in the
 * same transaction as the request's own writes: a key whose write committed has its response
 * here, and is never executed again until the record expires. Neither the caller nor the key can
 * be read from a row: `key_hash` is a SHA-256 of both, `response` is encrypted with a key derived
 * from the `Idempotency-Key`, which is stored nowhere.
 */
@Entity('idempotency_keys')
@Index('idx_idempotency_keys_expires_at', ['expires_at'])
export class IdempotencyRecord {
  /** SHA-256 (hex) of the caller's scope and the `Idempotency-Key`. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  key_hash: string;

  /** SHA-256 (hex) of the request: method, versioned path and query, canonical JSON body. */
  @Column({ type: 'varchar', length: 64 })
  fingerprint: string;

  /** The response as sent (headers that matter and the body), AES-256-GCM sealed, base64url. */
  @Column({ type: 'text' })
  response: string;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  /** From then on the key is free again (created_at + IDEMPOTENCY_TTL); expired rows are pruned. */
  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;
}
