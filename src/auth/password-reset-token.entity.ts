import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * A password-reset token (docs/authentication.md#password-reset), stored only as the SHA-256 hex
 * of the random value mailed to the user. Single use: the reset deletes it, and any change of the
 * user's password deletes every token of the user. Goes with its user.
 */
@Entity('password_reset_tokens')
@Index('idx_password_reset_tokens_user_id', ['user_id'])
@Index('idx_password_reset_tokens_expires_at', ['expires_at'])
export class PasswordResetToken {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 64, unique: true })
  token_hash: string;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
