import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';
import { VersionedEntity } from '../database/versioned-entity.js';
import { Tag } from '../tags/tag.entity.js';
import { User } from '../users/user.entity.js';

/** Article statuses (docs/resources/articles.md#status); transitions in ARTICLE_TRANSITIONS. */
export const ARTICLE_STATUSES = ['draft', 'published', 'archived'] as const;
export type ArticleStatus = (typeof ARTICLE_STATUSES)[number];

/** The status changes allowed (docs/resources/articles.md#status), from → to; `archived` is final. Staying in a status is no change. */
export const ARTICLE_TRANSITIONS: Readonly<Record<ArticleStatus, readonly ArticleStatus[]>> = {
  draft: ['published', 'archived'],
  published: ['draft', 'archived'],
  archived: [],
};

/** An article (docs/resources/articles.md). Deleted with its author; its tags are in `article_tags`. */
@Entity('articles')
@Index('idx_articles_title_id', ['title', 'id'])
@Index('idx_articles_published_at_id', ['published_at', 'id'])
@Index('idx_articles_created_at_id', ['created_at', 'id'])
@Index('idx_articles_updated_at_id', ['updated_at', 'id'])
@Index('idx_articles_status_id', ['status', 'id'])
@Index('idx_articles_status_title_id', ['status', 'title', 'id'])
@Index('idx_articles_status_published_at_id', ['status', 'published_at', 'id'])
@Index('idx_articles_status_created_at_id', ['status', 'created_at', 'id'])
@Index('idx_articles_status_updated_at_id', ['status', 'updated_at', 'id'])
@Index('idx_articles_author_id_status_id', ['author_id', 'status', 'id'])
// filter operators (docs/lists.md#filter-operators): expression and trigram indexes, written by their migration for each database
@Index('idx_articles_title_c', { synchronize: false })
@Index('idx_articles_status_title_c', { synchronize: false })
@Index('idx_articles_author_id_title_c', { synchronize: false })
@Index('idx_articles_title_trgm', { synchronize: false })
export class Article extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text', default: '' })
  body: string;

  @Column({ type: 'varchar', length: 16, default: 'draft' })
  status: ArticleStatus;

  @Column({ type: 'integer' })
  author_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'author_id' })
  author?: Relation<User>;

  /** Set on the first publication; kept when unpublished or archived. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  published_at: Date | null;
}

/** Join table of articles and tags; rows go with either side. */
@Entity('article_tags')
@Index('idx_article_tags_tag_id', ['tag_id'])
export class ArticleTag {
  @PrimaryColumn({ type: 'integer' })
  article_id: number;

  @PrimaryColumn({ type: 'integer' })
  tag_id: number;

  @ManyToOne(() => Article, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'article_id' })
  article?: Relation<Article>;

  @ManyToOne(() => Tag, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tag_id' })
  tag?: Relation<Tag>;
}
