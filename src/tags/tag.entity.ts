import { Column, Entity, Index, PrimaryGeneratedColumn, VersionColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';

/** A tag (docs/resources/tags.md): `name` is 1-50 of `[a-z0-9-]`, stored lower-case, unique. */
@Entity('tags')
@Index('idx_tags_created_at_id', ['created_at', 'id'])
@Index('idx_tags_updated_at_id', ['updated_at', 'id'])
export class Tag {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 50, unique: true })
  name: string;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  updated_at: Date;

  /**
   * 1 on insert, incremented by every UPDATE of the row (TypeORM's query builder adds
   * `version = version + 1`) and by the writes that change what its representation embeds: the
   * source of its entity tag and the condition of `If-Match` writes (src/common/writes/preconditions.ts).
   */
  @VersionColumn({ type: 'integer', default: 1 })
  version: number;
}
