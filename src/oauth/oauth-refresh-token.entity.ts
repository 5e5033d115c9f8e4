import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { OAuthGrant } from './oauth-grant.entity.js';

/**
 * One issuance of a grant: a refresh token (SHA-256 hex only) and the access token issued with it
 * (`access_jti`, `access_expires_at`), so that revoking the grant can deny the access tokens still
 * alive. `rotated_at` is set when the refresh token is used (rotation, RFC 9700 §4.14.2); using
 * it again revokes the whole grant (reuse detection).
 */
@Entity('oauth_refresh_tokens')
@Index('idx_oauth_refresh_tokens_grant_id', ['grant_id'])
export class OAuthRefreshToken {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  grant_id: number;

  @ManyToOne(() => OAuthGrant, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'grant_id' })
  grant?: Relation<OAuthGrant>;

  @Column({ type: 'varchar', length: 64, unique: true })
  token_hash: string;

  /** Space-separated scopes of this issuance (a refresh may narrow them). */
  @Column({ type: 'text' })
  scopes: string;

  @Column({ type: 'varchar', length: 36 })
  access_jti: string;

  @Column({ type: TIMESTAMP_TYPE })
  access_expires_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  expires_at: Date;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  rotated_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
