import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Article } from '../articles/article.entity.js';
import { VersionedEntity } from '../database/versioned-entity.js';
import { User } from '../users/user.entity.js';

/** A comment on an article (docs/resources/comments.md). Deleted with its article or its author. */
@Entity('comments')
@Index('idx_comments_article_id_id', ['article_id', 'id'])
@Index('idx_comments_article_id_created_at_id', ['article_id', 'created_at', 'id'])
@Index('idx_comments_article_id_updated_at_id', ['article_id', 'updated_at', 'id'])
@Index('idx_comments_author_id', ['author_id'])
export class Comment extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'integer' })
  article_id: number;

  @ManyToOne(() => Article, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'article_id' })
  article?: Relation<Article>;

  @Column({ type: 'integer' })
  author_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'author_id' })
  author?: Relation<User>;
}
