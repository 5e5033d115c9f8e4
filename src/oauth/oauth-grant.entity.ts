import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';
import { OAuthClient } from './oauth-client.entity.js';

/**
 * What a user granted a client by approving one authorization request: the scopes, and the
 * family of refresh tokens descending from the code exchange (`family_id`, also the `fid` claim of
 * its access tokens). Revoking a grant deletes it with its refresh tokens and denies its live
 * access tokens.
 */
@Entity('oauth_grants')
@Index('idx_oauth_grants_user_id_id', ['user_id', 'id'])
@Index('idx_oauth_grants_oauth_client_id', ['oauth_client_id'])
export class OAuthGrant {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'integer' })
  oauth_client_id: number;

  @ManyToOne(() => OAuthClient, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'oauth_client_id' })
  client?: Relation<OAuthClient>;

  /** Space-separated scopes the user approved. */
  @Column({ type: 'text' })
  scopes: string;

  @Column({ type: 'varchar', length: 36, unique: true })
  family_id: string;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  /** Last code exchange or refresh. */
  @Column({ type: TIMESTAMP_TYPE })
  last_used_at: Date;
}
