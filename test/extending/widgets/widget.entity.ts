import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation, VersionColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../../../src/config/database-kind.js';
import { User } from '../../../src/users/user.entity.js';

/** The colours a widget comes in. */
export const WIDGET_COLOURS = ['red', 'blue'] as const;
export type WidgetColour = (typeof WIDGET_COLOURS)[number];

/** A widget owned by one user: the throwaway resource of test/extending.e2e-spec.ts. */
@Entity('widgets')
@Index('idx_widgets_owner_id_id', ['owner_id', 'id'])
export class Widget {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 8 })
  colour: WidgetColour;

  @Column({ type: 'integer' })
  owner_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id' })
  owner?: Relation<User>;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;

  @Column({ type: TIMESTAMP_TYPE })
  updated_at: Date;

  /** The row version: the source of the widget's `ETag`. */
  @VersionColumn({ type: 'integer', default: 1 })
  version: number;
}
