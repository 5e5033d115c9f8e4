import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import type { Role } from '../common/caller/roles.js';
import { VersionedEntity } from '../database/versioned-entity.js';

/** A user account (docs/resources/users.md). Table `users`; property names are the column names. */
@Entity('users')
@Index('idx_users_name_id', ['name', 'id'])
@Index('idx_users_age_id', ['age', 'id'])
@Index('idx_users_role_id', ['role', 'id'])
@Index('idx_users_created_at_id', ['created_at', 'id'])
@Index('idx_users_updated_at_id', ['updated_at', 'id'])
// filter operators (docs/lists.md#filter-operators): expression and trigram indexes, written by their migration for each database
@Index('idx_users_name_c', { synchronize: false })
@Index('idx_users_username_c', { synchronize: false })
@Index('idx_users_name_trgm', { synchronize: false })
export class User extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 32, unique: true })
  username: string;

  /** argon2id hash of the password; never leaves the service. */
  @Column({ type: 'varchar', length: 255, select: false })
  password_hash: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'integer', nullable: true })
  age: number | null;

  /** Stored lower-cased, unique. */
  @Column({ type: 'varchar', length: 254, nullable: true, unique: true })
  email: string | null;

  /** When `email` was verified (docs/authentication.md#e-mail-verification); null until then, and again after any change of the address. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  email_verified_at: Date | null;

  /**
   * When `email` was last changed after registration; null for the address given at registration.
   * A changed address gets no password-reset mail until it is verified. Never shown.
   */
  @Column({ type: TIMESTAMP_TYPE, nullable: true, select: false })
  email_changed_at: Date | null;

  @Column({ type: 'varchar', length: 16, default: 'user' })
  role: Role;

  /** When the password was last set after registration (a change or a reset): sessions started before it end. Never shown. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true, select: false })
  password_changed_at: Date | null;
}
