import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * A two-factor recovery code (docs/authentication.md#two-factor-authentication-totp), stored only as
 * the SHA-256 hex of `<user id>:<code>`; deleted when used (single use), all of a user's replaced
 * at each confirmed enrolment and deleted when two-factor authentication is turned off. Goes with its user.
 */
@Entity('totp_recovery_codes')
@Index('idx_totp_recovery_codes_user_id', ['user_id'])
export class TotpRecoveryCode {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 64, unique: true })
  code_hash: string;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
