import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * An e-mail verification token (docs/authentication.md#e-mail-verification), stored only as the
 * SHA-256 hex of the random value mailed to `email`, the address it verifies. Single use: the
 * verification deletes every token of the user, and so does any change of the user's address.
 * Goes with its user.
 */
@Entity('email_verification_tokens')
@Index('idx_email_verification_tokens_user_id', ['user_id'])
@Index('idx_email_verification_tokens_expires_at', ['expires_at'])
export class EmailVerificationToken {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 64, unique: true })
  token_hash: string;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  /** The address the token was mailed to (lower-cased): it verifies only while the user still has it. Never logged. */
  @Column({ type: 'varchar', length: 254 })
  email: string;

  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
