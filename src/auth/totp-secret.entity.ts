import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * A user's TOTP secret (docs/authentication.md#two-factor-authentication-totp), one per user:
 * encrypted at rest (TotpCipher), pending until confirmed with a code (`enabled_at` null), then
 * active. `last_step` is the RFC 6238 time step of the last code accepted: a code of that step or
 * an earlier one is refused (no replay within its window). Goes with its user.
 */
@Entity('totp_secrets')
export class TotpSecret {
  @PrimaryColumn({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** `v1.<iv>.<tag>.<ciphertext>` (AES-256-GCM); never logged, never returned after enrolment. */
  @Column({ type: 'varchar', length: 255 })
  secret_encrypted: string;

  /** When the enrolment was confirmed; null while pending. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  enabled_at: Date | null;

  /** The time step (Unix seconds / 30) of the last accepted code; null before the first. */
  @Column({ type: 'integer', nullable: true })
  last_step: number | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
