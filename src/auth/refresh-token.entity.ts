import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * A refresh token, stored only as the SHA-256 hex of the random value the client holds
 * (docs/authentication.md#refreshing-rotation-and-reuse-detection). `family_id` groups every token descending from one login, so that a logout or a
 * detected reuse revokes the whole family.
 */
@Entity('refresh_tokens')
@Index('idx_refresh_tokens_family_id', ['family_id'])
@Index('idx_refresh_tokens_user_id', ['user_id'])
export class RefreshToken {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 64, unique: true })
  token_hash: string;

  @Column({ type: 'varchar', length: 36 })
  family_id: string;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;

  /** Set when rotated, logged out or revoked; a revoked token never works again. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  revoked_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
