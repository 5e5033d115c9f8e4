import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/** What started a login (docs/authentication.md#your-logins): a password login's token family, or a cookie session. */
export const LOGIN_KINDS = ['token', 'session'] as const;

/** One of {@link LOGIN_KINDS}. */
export type LoginKind = (typeof LOGIN_KINDS)[number];

/**
 * A login the user can see and end (docs/authentication.md#your-logins): a refresh-token family
 * (`handle` = its family id, the access tokens' `fid`) or a cookie session (`handle` = the SHA-256
 * of its id, its key in the shared store). Written when the login starts, deleted when it ends;
 * `handle` is never shown. Deleted with its user.
 */
@Entity('logins')
@Index('idx_logins_user_id_id', ['user_id', 'id'])
@Index('idx_logins_kind_handle', ['kind', 'handle'], { unique: true })
export class Login {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 16 })
  kind: LoginKind;

  @Column({ type: 'varchar', length: 64 })
  handle: string;

  /** The client address that started it (`req.ip`, TRUST_PROXY-aware). */
  @Column({ type: 'varchar', length: 64 })
  address: string;

  /** The `User-Agent` that started it, at most 256 characters. */
  @Column({ type: 'varchar', length: 256 })
  user_agent: string;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  /** A token login's last refresh; a session's is read from the store when listed. */
  @Column({ type: TIMESTAMP_TYPE })
  last_used_at: Date;

  /** When it ends unless used: a token family's newest refresh token's expiry; a session's absolute end. */
  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;
}
