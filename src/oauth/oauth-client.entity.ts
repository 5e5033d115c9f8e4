import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { User } from '../users/user.entity.js';

/**
 * A registered OAuth 2.0 client (RFC 6749 §2). `client_id` is the public identifier the protocol
 * uses; `id` the sequential id of `/v1/oauth-clients/{id}`. A confidential client's secret is
 * stored only as its SHA-256 hex. Redirect URIs and scopes are space-separated (neither may
 * contain a space). Deleting a client deletes its codes and grants.
 */
@Entity('oauth_clients')
@Index('idx_oauth_clients_created_at_id', ['created_at', 'id'])
@Index('idx_oauth_clients_updated_at_id', ['updated_at', 'id'])
export class OAuthClient {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 64, unique: true })
  client_id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** Space-separated, matched exactly (RFC 9700 §4.1.1). */
  @Column({ type: 'text' })
  redirect_uris: string;

  /** Space-separated: the widest scope the client may ever be granted. */
  @Column({ type: 'text' })
  scopes: string;

  @Column({ type: 'boolean' })
  confidential: boolean;

  @Column({ type: 'varchar', length: 64, nullable: true })
  secret_hash: string | null;

  /** The admin who registered it (null once that user is deleted). */
  @Column({ type: 'integer', nullable: true })
  created_by: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by' })
  creator?: Relation<User>;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  updated_at: Date;
}
