import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { VersionedEntity } from '../database/versioned-entity.js';
import { User } from '../users/user.entity.js';

/** Todo statuses (docs/resources/todos.md#fields); any transition is allowed. */
export const TODO_STATUSES = ['pending', 'in_progress', 'done'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

/** A private todo item owned by one user (docs/resources/todos.md). Deleted with its owner. */
@Entity('todos')
@Index('idx_todos_owner_id_id', ['owner_id', 'id'])
@Index('idx_todos_owner_id_status_id', ['owner_id', 'status', 'id'])
@Index('idx_todos_owner_id_updated_at_id', ['owner_id', 'updated_at', 'id'])
@Index('idx_todos_title_id', ['title', 'id'])
@Index('idx_todos_status_id', ['status', 'id'])
@Index('idx_todos_created_at_id', ['created_at', 'id'])
@Index('idx_todos_updated_at_id', ['updated_at', 'id'])
// filter operators (docs/lists.md#filter-operators): expression and trigram indexes, written by their migration for each database
@Index('idx_todos_owner_id_title_c', { synchronize: false })
@Index('idx_todos_title_c', { synchronize: false })
@Index('idx_todos_title_trgm', { synchronize: false })
@Index('idx_todos_content_trgm', { synchronize: false })
export class Todo extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text', nullable: true })
  content: string | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: TodoStatus;

  @Column({ type: 'integer' })
  owner_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id' })
  owner?: Relation<User>;
}
