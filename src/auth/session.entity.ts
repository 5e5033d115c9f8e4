import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * A server-side session (SPEC §3 session cookie). The row's key is the SHA-256 hex of the `sid`
 * cookie value, so a database read gives no usable cookie. It ends at `expires_at` (absolute) or
 * after SESSION_IDLE_TTL seconds without use (`last_seen_at`). Deleted with its user.
 */
@Entity('sessions')
export class Session {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id_hash: string;

  @Index()
  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** Sent back in `X-CSRF-Token` on unsafe methods. */
  @Column({ type: 'varchar', length: 64 })
  csrf_token: string;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  last_seen_at: Date;

  @Index()
  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;
}
