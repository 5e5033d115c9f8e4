import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * An API key (docs/authentication.md#api-keys): acts as its user, limited to `scopes`. The key itself is shown once; only
 * its SHA-256 hex and a visible `prefix` are stored. Deleted with its user.
 */
@Entity('api_keys')
@Index('idx_api_keys_user_id_id', ['user_id', 'id'])
export class ApiKey {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** The first characters of the key (`rk_` + 8), to recognise it in lists. */
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Column({ type: 'varchar', length: 64, unique: true })
  key_hash: string;

  /** Space-separated scopes, e.g. `todos:read todos:write`. */
  @Column({ type: 'text' })
  scopes: string;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  expires_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  last_used_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
