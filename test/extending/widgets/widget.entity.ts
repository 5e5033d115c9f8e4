import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { VersionedEntity } from '../../../src/database/versioned-entity.js';
import { User } from '../../../src/users/user.entity.js';

/** The colours a widget comes in. */
export const WIDGET_COLOURS = ['red', 'blue'] as const;
export type WidgetColour = (typeof WIDGET_COLOURS)[number];

/** A widget owned by one user: the throwaway resource of test/extending.e2e-spec.ts. */
@Entity('widgets')
@Index('idx_widgets_owner_id_id', ['owner_id', 'id'])
export class Widget extends VersionedEntity {
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
}
