import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { VersionedEntity } from '../database/versioned-entity.js';

/** A tag (docs/resources/tags.md): `name` is 1-50 of `[a-z0-9-]`, stored lower-case, unique. */
@Entity('tags')
@Index('idx_tags_created_at_id', ['created_at', 'id'])
@Index('idx_tags_updated_at_id', ['updated_at', 'id'])
// filter operators (docs/lists.md#filter-operators): expression and trigram indexes, written by their migration for each database
@Index('idx_tags_name_c', { synchronize: false })
@Index('idx_tags_name_trgm', { synchronize: false })
export class Tag extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 50, unique: true })
  name: string;
}
