import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthGrant } from './oauth-grant.entity.js';

/**
 * An authorization code (RFC 6749 §4.1.2), stored only as the SHA-256 hex of the code, with the
 * PKCE challenge (RFC 7636, S256 only). Single use: `used_at` is set by the first exchange and the
 * row is kept until it has expired, so that a second use is recognised and revokes the grant
 * issued from the code (`grant_id`).
 */
@Entity('oauth_authorization_codes')
@Index('idx_oauth_codes_oauth_client_id', ['oauth_client_id'])
@Index('idx_oauth_codes_user_id', ['user_id'])
@Index('idx_oauth_codes_expires_at', ['expires_at'])
export class OAuthAuthorizationCode {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 64, unique: true })
  code_hash: string;

  @Column({ type: 'integer' })
  oauth_client_id: number;

  @ManyToOne(() => OAuthClient, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'oauth_client_id' })
  client?: Relation<OAuthClient>;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'text' })
  redirect_uri: string;

  /** Space-separated scopes the user approved. */
  @Column({ type: 'text' })
  scopes: string;

  @Column({ type: 'varchar', length: 128 })
  code_challenge: string;

  @Column({ type: 'varchar', length: 8 })
  code_challenge_method: string;

  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  used_at: Date | null;

  /** The grant the code was exchanged for (null before the exchange or once the grant is revoked). */
  @Column({ type: 'integer', nullable: true })
  grant_id: number | null;

  @ManyToOne(() => OAuthGrant, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'grant_id' })
  grant?: Relation<OAuthGrant>;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
